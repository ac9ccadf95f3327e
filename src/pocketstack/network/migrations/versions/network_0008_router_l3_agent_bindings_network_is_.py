"""router L3 agent bindings, network is_default, packet rate limit burst, network segments

Revision ID: network_0008
Revises: network_0007
Create Date: 2026-12-06 17:24:49.739964
"""
from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

DATETIME = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mariadb').with_variant(
    mysql.DATETIME(fsp=6), 'mysql')


revision = 'network_0008'
down_revision = 'network_0007'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('network_segments',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('network_id', sa.String(length=36), nullable=False),
    sa.Column('name', sa.String(length=255), nullable=True),
    sa.Column('network_type', sa.String(length=32), nullable=False),
    sa.Column('physical_network', sa.String(length=64), nullable=True),
    sa.Column('segmentation_id', sa.Integer(), nullable=True),
    sa.Column('segment_key', sa.String(length=128), nullable=True),
    sa.Column('description', sa.String(length=255), nullable=False),
    sa.Column('created_at', DATETIME, nullable=False),
    sa.Column('updated_at', DATETIME, nullable=False),
    sa.Column('revision_number', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['network_id'], ['network_networks.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('segment_key')
    )
    with op.batch_alter_table('network_segments', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_network_segments_network_id'), ['network_id'], unique=False)

    op.create_table('network_router_l3_agent_bindings',
    sa.Column('router_id', sa.String(length=36), nullable=False),
    sa.Column('l3_agent_id', sa.String(length=36), nullable=True),
    sa.ForeignKeyConstraint(['router_id'], ['network_routers.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('router_id')
    )
    with op.batch_alter_table('network_router_l3_agent_bindings', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_network_router_l3_agent_bindings_l3_agent_id'), ['l3_agent_id'], unique=False)

    with op.batch_alter_table('network_networks', schema=None) as batch_op:
        batch_op.add_column(sa.Column('is_default', sa.Boolean(), nullable=True))
        batch_op.create_unique_constraint('uq_network_networks_is_default', ['is_default'])

    with op.batch_alter_table('network_qos_rules', schema=None) as batch_op:
        batch_op.add_column(sa.Column('burst', sa.Integer(), nullable=True))

def downgrade():
    with op.batch_alter_table('network_qos_rules', schema=None) as batch_op:
        batch_op.drop_column('burst')

    with op.batch_alter_table('network_networks', schema=None) as batch_op:
        batch_op.drop_constraint('uq_network_networks_is_default', type_='unique')
        batch_op.drop_column('is_default')

    with op.batch_alter_table('network_router_l3_agent_bindings', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_network_router_l3_agent_bindings_l3_agent_id'))

    op.drop_table('network_router_l3_agent_bindings')
    with op.batch_alter_table('network_segments', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_network_segments_network_id'))

    op.drop_table('network_segments')
