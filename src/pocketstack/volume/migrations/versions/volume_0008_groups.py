"""groups

Revision ID: volume_0008
Revises: volume_0007
Create Date: 2026-11-27 15:32:12.127144
"""
from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql


revision = 'volume_0008'
down_revision = 'volume_0007'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('volume_group_types',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('name', sa.String(length=255), nullable=False),
    sa.Column('description', sa.String(length=255), nullable=True),
    sa.Column('is_public', sa.Boolean(), nullable=False),
    sa.Column('group_specs', sa.JSON(), nullable=False),
    sa.Column('created_at', sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mariadb').with_variant(mysql.DATETIME(fsp=6), 'mysql'), nullable=False),
    sa.Column('updated_at', sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mariadb').with_variant(mysql.DATETIME(fsp=6), 'mysql'), nullable=True),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('name')
    )
    op.create_table('volume_groups',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('project_id', sa.String(length=255), nullable=False),
    sa.Column('user_id', sa.String(length=255), nullable=True),
    sa.Column('name', sa.String(length=255), nullable=True),
    sa.Column('description', sa.String(length=255), nullable=True),
    sa.Column('status', sa.String(length=30), nullable=False),
    sa.Column('availability_zone', sa.String(length=255), nullable=False),
    sa.Column('group_type_id', sa.String(length=36), nullable=False),
    sa.Column('volume_type_ids', sa.JSON(), nullable=False),
    sa.Column('group_snapshot_id', sa.String(length=36), nullable=True),
    sa.Column('source_group_id', sa.String(length=36), nullable=True),
    sa.Column('created_at', sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mariadb').with_variant(mysql.DATETIME(fsp=6), 'mysql'), nullable=False),
    sa.Column('updated_at', sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mariadb').with_variant(mysql.DATETIME(fsp=6), 'mysql'), nullable=True),
    sa.ForeignKeyConstraint(['group_type_id'], ['volume_group_types.id'], ),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('volume_groups', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_volume_groups_project_id'), ['project_id'], unique=False)

    op.create_table('volume_group_snapshots',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('project_id', sa.String(length=255), nullable=False),
    sa.Column('user_id', sa.String(length=255), nullable=True),
    sa.Column('group_id', sa.String(length=36), nullable=False),
    sa.Column('group_type_id', sa.String(length=36), nullable=False),
    sa.Column('name', sa.String(length=255), nullable=True),
    sa.Column('description', sa.String(length=255), nullable=True),
    sa.Column('status', sa.String(length=30), nullable=False),
    sa.Column('created_at', sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mariadb').with_variant(mysql.DATETIME(fsp=6), 'mysql'), nullable=False),
    sa.Column('updated_at', sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mariadb').with_variant(mysql.DATETIME(fsp=6), 'mysql'), nullable=True),
    sa.ForeignKeyConstraint(['group_id'], ['volume_groups.id'], ),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('volume_group_snapshots', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_volume_group_snapshots_group_id'), ['group_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_volume_group_snapshots_project_id'), ['project_id'], unique=False)

    with op.batch_alter_table('volume_snapshots', schema=None) as batch_op:
        batch_op.add_column(sa.Column('group_snapshot_id', sa.String(length=36), nullable=True))
        batch_op.create_index(batch_op.f('ix_volume_snapshots_group_snapshot_id'), ['group_snapshot_id'], unique=False)

    with op.batch_alter_table('volume_volumes', schema=None) as batch_op:
        batch_op.add_column(sa.Column('group_id', sa.String(length=36), nullable=True))
        batch_op.create_index(batch_op.f('ix_volume_volumes_group_id'), ['group_id'], unique=False)



def downgrade():
    with op.batch_alter_table('volume_volumes', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_volume_volumes_group_id'))
        batch_op.drop_column('group_id')

    with op.batch_alter_table('volume_snapshots', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_volume_snapshots_group_snapshot_id'))
        batch_op.drop_column('group_snapshot_id')

    with op.batch_alter_table('volume_group_snapshots', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_volume_group_snapshots_project_id'))
        batch_op.drop_index(batch_op.f('ix_volume_group_snapshots_group_id'))

    op.drop_table('volume_group_snapshots')
    with op.batch_alter_table('volume_groups', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_volume_groups_project_id'))

    op.drop_table('volume_groups')
    op.drop_table('volume_group_types')
