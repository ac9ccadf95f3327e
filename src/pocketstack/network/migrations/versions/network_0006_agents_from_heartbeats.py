"""agents from heartbeats

Revision ID: network_0006
Revises: network_0005
Create Date: 2026-11-27 16:01:45.475372
"""
from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

DATETIME = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mariadb').with_variant(
    mysql.DATETIME(fsp=6), 'mysql')


revision = 'network_0006'
down_revision = 'network_0005'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('network_agents', schema=None) as batch_op:
        batch_op.add_column(sa.Column('agent_type', sa.String(length=255), nullable=True))
        batch_op.add_column(sa.Column('binary', sa.String(length=255), nullable=True))
        batch_op.add_column(sa.Column('topic', sa.String(length=255), nullable=True))
        batch_op.add_column(sa.Column('host', sa.String(length=255), nullable=True))
        batch_op.add_column(sa.Column('availability_zone', sa.String(length=255), nullable=True))
        batch_op.add_column(sa.Column('configurations', sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column('resources_synced', sa.Boolean(), nullable=True))
        batch_op.add_column(sa.Column('created_at', DATETIME, nullable=True))
        batch_op.add_column(sa.Column('started_at', DATETIME, nullable=True))
        batch_op.add_column(sa.Column('heartbeat_timestamp', DATETIME, nullable=True))
        batch_op.create_index(batch_op.f('ix_network_agents_host'), ['host'], unique=False)



def downgrade():
    with op.batch_alter_table('network_agents', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_network_agents_host'))
        batch_op.drop_column('heartbeat_timestamp')
        batch_op.drop_column('started_at')
        batch_op.drop_column('created_at')
        batch_op.drop_column('resources_synced')
        batch_op.drop_column('configurations')
        batch_op.drop_column('availability_zone')
        batch_op.drop_column('host')
        batch_op.drop_column('topic')
        batch_op.drop_column('binary')
        batch_op.drop_column('agent_type')

