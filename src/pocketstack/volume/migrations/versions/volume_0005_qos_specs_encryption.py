"""qos specs, type encryption and the type's qos_specs_id

Revision ID: volume_0005
Revises: volume_0004
Create Date: 2026-12-05 10:00:00.000000
"""
from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql


revision = 'volume_0005'
down_revision = 'volume_0004'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('volume_qos_specs',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('name', sa.String(length=255), nullable=False),
    sa.Column('consumer', sa.String(length=255), nullable=False),
    sa.Column('specs', sa.JSON(), nullable=False),
    sa.Column('created_at', sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mariadb').with_variant(mysql.DATETIME(fsp=6), 'mysql'), nullable=False),
    sa.Column('updated_at', sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mariadb').with_variant(mysql.DATETIME(fsp=6), 'mysql'), nullable=True),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('name')
    )
    op.create_table('volume_type_encryption',
    sa.Column('volume_type_id', sa.String(length=36), nullable=False),
    sa.Column('encryption_id', sa.String(length=36), nullable=False),
    sa.Column('provider', sa.String(length=255), nullable=False),
    sa.Column('cipher', sa.String(length=255), nullable=True),
    sa.Column('key_size', sa.Integer(), nullable=True),
    sa.Column('control_location', sa.String(length=255), nullable=False),
    sa.Column('created_at', sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mariadb').with_variant(mysql.DATETIME(fsp=6), 'mysql'), nullable=False),
    sa.Column('updated_at', sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mariadb').with_variant(mysql.DATETIME(fsp=6), 'mysql'), nullable=True),
    sa.ForeignKeyConstraint(['volume_type_id'], ['volume_types.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('volume_type_id')
    )
    with op.batch_alter_table('volume_types', schema=None) as batch_op:
        batch_op.add_column(sa.Column('qos_specs_id', sa.String(length=36), nullable=True))
        batch_op.create_index(batch_op.f('ix_volume_types_qos_specs_id'), ['qos_specs_id'], unique=False)



def downgrade():
    with op.batch_alter_table('volume_types', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_volume_types_qos_specs_id'))
        batch_op.drop_column('qos_specs_id')

    op.drop_table('volume_type_encryption')
    op.drop_table('volume_qos_specs')
