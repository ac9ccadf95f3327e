"""port extra_dhcp_opts and trusted

Revision ID: network_0004
Revises: network_0003
Create Date: 2026-11-30 10:00:00.000000
"""
from alembic import op
import sqlalchemy as sa


revision = 'network_0004'
down_revision = 'network_0003'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('network_ports', schema=None) as batch_op:
        batch_op.add_column(sa.Column('extra_dhcp_opts', sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column('trusted', sa.Boolean(), nullable=True))


def downgrade():
    with op.batch_alter_table('network_ports', schema=None) as batch_op:
        batch_op.drop_column('trusted')
        batch_op.drop_column('extra_dhcp_opts')
