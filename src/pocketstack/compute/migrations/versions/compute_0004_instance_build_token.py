"""instance build token

Revision ID: compute_0004
Revises: compute_0003
Create Date: 2026-11-27 09:00:00.000000
"""
from alembic import op
import sqlalchemy as sa

revision = 'compute_0004'
down_revision = 'compute_0003'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('compute_instances') as batch_op:
        batch_op.add_column(sa.Column('build_token', sa.Text(), nullable=True))


def downgrade():
    with op.batch_alter_table('compute_instances') as batch_op:
        batch_op.drop_column('build_token')
