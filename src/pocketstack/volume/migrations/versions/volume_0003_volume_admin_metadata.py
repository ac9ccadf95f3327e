"""volume admin metadata

Revision ID: volume_0003
Revises: volume_0002
Create Date: 2026-11-27 10:00:00.000000
"""
from alembic import op
import sqlalchemy as sa

revision = 'volume_0003'
down_revision = 'volume_0002'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('volume_volumes') as batch_op:
        batch_op.add_column(sa.Column('admin_metadata', sa.JSON(), nullable=True))


def downgrade():
    with op.batch_alter_table('volume_volumes') as batch_op:
        batch_op.drop_column('admin_metadata')
