"""project default volume types and volume transfers

Revision ID: volume_0006
Revises: volume_0005
Create Date: 2026-11-27 15:22:04.808614
"""
from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql


revision = 'volume_0006'
down_revision = 'volume_0005'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('volume_project_default_types',
    sa.Column('project_id', sa.String(length=255), nullable=False),
    sa.Column('volume_type_id', sa.String(length=36), nullable=False),
    sa.Column('created_at', sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mariadb').with_variant(mysql.DATETIME(fsp=6), 'mysql'), nullable=False),
    sa.Column('updated_at', sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mariadb').with_variant(mysql.DATETIME(fsp=6), 'mysql'), nullable=True),
    sa.ForeignKeyConstraint(['volume_type_id'], ['volume_types.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('project_id')
    )
    with op.batch_alter_table('volume_project_default_types', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_volume_project_default_types_volume_type_id'), ['volume_type_id'], unique=False)

    op.create_table('volume_transfers',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('volume_id', sa.String(length=36), nullable=False),
    sa.Column('name', sa.String(length=255), nullable=True),
    sa.Column('salt', sa.String(length=255), nullable=False),
    sa.Column('crypt_hash', sa.String(length=255), nullable=False),
    sa.Column('no_snapshots', sa.Boolean(), nullable=False),
    sa.Column('source_project_id', sa.String(length=255), nullable=False),
    sa.Column('destination_project_id', sa.String(length=255), nullable=True),
    sa.Column('accepted', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mariadb').with_variant(mysql.DATETIME(fsp=6), 'mysql'), nullable=False),
    sa.Column('updated_at', sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mariadb').with_variant(mysql.DATETIME(fsp=6), 'mysql'), nullable=True),
    sa.ForeignKeyConstraint(['volume_id'], ['volume_volumes.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('volume_transfers', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_volume_transfers_source_project_id'), ['source_project_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_volume_transfers_volume_id'), ['volume_id'], unique=False)



def downgrade():
    with op.batch_alter_table('volume_transfers', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_volume_transfers_volume_id'))
        batch_op.drop_index(batch_op.f('ix_volume_transfers_source_project_id'))

    op.drop_table('volume_transfers')
    with op.batch_alter_table('volume_project_default_types', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_volume_project_default_types_volume_type_id'))

    op.drop_table('volume_project_default_types')
