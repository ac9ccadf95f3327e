"""compute node shared storage

Revision ID: compute_0005
Revises: compute_0004
Create Date: 2026-12-06 22:20:00.000000
"""
from alembic import op
import sqlalchemy as sa

revision = 'compute_0005'
down_revision = 'compute_0004'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('compute_nodes') as batch_op:
        batch_op.add_column(sa.Column('shared_storage', sa.String(length=255), nullable=True))


def downgrade():
    with op.batch_alter_table('compute_nodes') as batch_op:
        batch_op.drop_column('shared_storage')
