"""inventories keep their usage (used), so a claim checks one row instead of summing

Revision ID: placement_0002
Revises: placement_0001
Create Date: 2026-11-27 15:55:00.000000
"""
from alembic import op
import sqlalchemy as sa

revision = 'placement_0002'
down_revision = 'placement_0001'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('placement_inventories') as batch_op:
        batch_op.add_column(sa.Column('used', sa.BigInteger(), nullable=False,
                                      server_default='0'))
    op.execute(
        "UPDATE placement_inventories SET used = COALESCE((SELECT SUM(a.used) "
        "FROM placement_allocations a WHERE a.resource_provider_id = "
        "placement_inventories.resource_provider_id AND a.resource_class = "
        "placement_inventories.resource_class), 0)")


def downgrade():
    with op.batch_alter_table('placement_inventories') as batch_op:
        batch_op.drop_column('used')
