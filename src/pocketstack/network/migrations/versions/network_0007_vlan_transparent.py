"""networks: vlan_transparent (neutron's vlan-transparent extension)

Revision ID: network_0007
Revises: network_0006
Create Date: 2026-11-27 16:55:00
"""
from alembic import op
import sqlalchemy as sa


revision = 'network_0007'
down_revision = 'network_0006'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('network_networks', schema=None) as batch_op:
        batch_op.add_column(sa.Column('vlan_transparent', sa.Boolean(), nullable=False,
                                      server_default=sa.false()))


def downgrade():
    with op.batch_alter_table('network_networks', schema=None) as batch_op:
        batch_op.drop_column('vlan_transparent')
