"""incremental backups: parent_id and service_metadata

Revision ID: volume_0004
Revises: volume_0003
Create Date: 2026-12-04 10:00:00.000000
"""
from alembic import op
import sqlalchemy as sa

revision = 'volume_0004'
down_revision = 'volume_0003'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('volume_backups') as batch_op:
        batch_op.add_column(sa.Column('parent_id', sa.String(length=36), nullable=True))
        batch_op.add_column(sa.Column('service_metadata', sa.Text(), nullable=True))
        batch_op.create_index(batch_op.f('ix_volume_backups_parent_id'), ['parent_id'],
                              unique=False)


def downgrade():
    with op.batch_alter_table('volume_backups') as batch_op:
        batch_op.drop_index(batch_op.f('ix_volume_backups_parent_id'))
        batch_op.drop_column('service_metadata')
        batch_op.drop_column('parent_id')
