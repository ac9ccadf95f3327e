"""subnet pools, address scopes, port forwardings, trunks, QoS

Revision ID: network_0002
Revises: network_0001
Create Date: 2026-11-24 20:23:21.543267
"""
from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

revision = 'network_0002'
down_revision = 'network_0001'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('network_address_scopes',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('project_id', sa.String(length=255), nullable=False),
    sa.Column('name', sa.String(length=255), nullable=False),
    sa.Column('ip_version', sa.Integer(), nullable=False),
    sa.Column('shared', sa.Boolean(), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('network_address_scopes', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_network_address_scopes_project_id'), ['project_id'], unique=False)

    op.create_table('network_qos_policies',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('project_id', sa.String(length=255), nullable=False),
    sa.Column('name', sa.String(length=255), nullable=False),
    sa.Column('shared', sa.Boolean(), nullable=False),
    sa.Column('is_default', sa.Boolean(), nullable=False),
    sa.Column('description', sa.String(length=255), nullable=False),
    sa.Column('created_at', sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mariadb').with_variant(mysql.DATETIME(fsp=6), 'mysql'), nullable=False),
    sa.Column('updated_at', sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mariadb').with_variant(mysql.DATETIME(fsp=6), 'mysql'), nullable=False),
    sa.Column('revision_number', sa.Integer(), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('network_qos_policies', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_network_qos_policies_project_id'), ['project_id'], unique=False)

    op.create_table('network_subnetpools',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('project_id', sa.String(length=255), nullable=False),
    sa.Column('name', sa.String(length=255), nullable=False),
    sa.Column('ip_version', sa.Integer(), nullable=False),
    sa.Column('prefixes', sa.JSON(), nullable=False),
    sa.Column('min_prefixlen', sa.Integer(), nullable=False),
    sa.Column('max_prefixlen', sa.Integer(), nullable=False),
    sa.Column('default_prefixlen', sa.Integer(), nullable=False),
    sa.Column('shared', sa.Boolean(), nullable=False),
    sa.Column('is_default', sa.Boolean(), nullable=False),
    sa.Column('default_quota', sa.Integer(), nullable=True),
    sa.Column('address_scope_id', sa.String(length=36), nullable=True),
    sa.Column('description', sa.String(length=255), nullable=False),
    sa.Column('created_at', sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mariadb').with_variant(mysql.DATETIME(fsp=6), 'mysql'), nullable=False),
    sa.Column('updated_at', sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mariadb').with_variant(mysql.DATETIME(fsp=6), 'mysql'), nullable=False),
    sa.Column('revision_number', sa.Integer(), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('network_subnetpools', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_network_subnetpools_address_scope_id'), ['address_scope_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_network_subnetpools_project_id'), ['project_id'], unique=False)

    op.create_table('network_qos_bandwidth_limit_rules',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('qos_policy_id', sa.String(length=36), nullable=False),
    sa.Column('max_kbps', sa.Integer(), nullable=False),
    sa.Column('max_burst_kbps', sa.Integer(), nullable=False),
    sa.Column('direction', sa.String(length=16), nullable=False),
    sa.ForeignKeyConstraint(['qos_policy_id'], ['network_qos_policies.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('qos_policy_id', 'direction', name='uq_network_qos_bw_direction')
    )
    with op.batch_alter_table('network_qos_bandwidth_limit_rules', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_network_qos_bandwidth_limit_rules_qos_policy_id'), ['qos_policy_id'], unique=False)

    op.create_table('network_trunks',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('project_id', sa.String(length=255), nullable=False),
    sa.Column('name', sa.String(length=255), nullable=False),
    sa.Column('admin_state_up', sa.Boolean(), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('port_id', sa.String(length=36), nullable=False),
    sa.Column('description', sa.String(length=255), nullable=False),
    sa.Column('created_at', sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mariadb').with_variant(mysql.DATETIME(fsp=6), 'mysql'), nullable=False),
    sa.Column('updated_at', sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mariadb').with_variant(mysql.DATETIME(fsp=6), 'mysql'), nullable=False),
    sa.Column('revision_number', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['port_id'], ['network_ports.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('port_id')
    )
    with op.batch_alter_table('network_trunks', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_network_trunks_project_id'), ['project_id'], unique=False)

    op.create_table('network_port_forwardings',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('floatingip_id', sa.String(length=36), nullable=False),
    sa.Column('internal_port_id', sa.String(length=36), nullable=False),
    sa.Column('internal_ip_address', sa.String(length=64), nullable=False),
    sa.Column('internal_port', sa.Integer(), nullable=False),
    sa.Column('external_port', sa.Integer(), nullable=False),
    sa.Column('protocol', sa.String(length=40), nullable=False),
    sa.Column('description', sa.String(length=255), nullable=False),
    sa.ForeignKeyConstraint(['floatingip_id'], ['network_floating_ips.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['internal_port_id'], ['network_ports.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('floatingip_id', 'external_port', 'protocol', name='uq_network_pf_external'),
    sa.UniqueConstraint('internal_port_id', 'internal_ip_address', 'internal_port', 'protocol', name='uq_network_pf_internal')
    )
    with op.batch_alter_table('network_port_forwardings', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_network_port_forwardings_floatingip_id'), ['floatingip_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_network_port_forwardings_internal_port_id'), ['internal_port_id'], unique=False)

    op.create_table('network_trunk_subports',
    sa.Column('port_id', sa.String(length=36), nullable=False),
    sa.Column('trunk_id', sa.String(length=36), nullable=False),
    sa.Column('segmentation_type', sa.String(length=32), nullable=False),
    sa.Column('segmentation_id', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['port_id'], ['network_ports.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['trunk_id'], ['network_trunks.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('port_id'),
    sa.UniqueConstraint('trunk_id', 'segmentation_type', 'segmentation_id', name='uq_network_subport_segmentation')
    )
    with op.batch_alter_table('network_trunk_subports', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_network_trunk_subports_trunk_id'), ['trunk_id'], unique=False)

    with op.batch_alter_table('network_subnets', schema=None) as batch_op:
        batch_op.add_column(sa.Column('subnetpool_id', sa.String(length=36), nullable=True))
        batch_op.create_index(batch_op.f('ix_network_subnets_subnetpool_id'), ['subnetpool_id'], unique=False)



def downgrade():
    with op.batch_alter_table('network_subnets', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_network_subnets_subnetpool_id'))
        batch_op.drop_column('subnetpool_id')

    with op.batch_alter_table('network_trunk_subports', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_network_trunk_subports_trunk_id'))

    op.drop_table('network_trunk_subports')
    with op.batch_alter_table('network_port_forwardings', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_network_port_forwardings_internal_port_id'))
        batch_op.drop_index(batch_op.f('ix_network_port_forwardings_floatingip_id'))

    op.drop_table('network_port_forwardings')
    with op.batch_alter_table('network_trunks', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_network_trunks_project_id'))

    op.drop_table('network_trunks')
    with op.batch_alter_table('network_qos_bandwidth_limit_rules', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_network_qos_bandwidth_limit_rules_qos_policy_id'))

    op.drop_table('network_qos_bandwidth_limit_rules')
    with op.batch_alter_table('network_subnetpools', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_network_subnetpools_project_id'))
        batch_op.drop_index(batch_op.f('ix_network_subnetpools_address_scope_id'))

    op.drop_table('network_subnetpools')
    with op.batch_alter_table('network_qos_policies', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_network_qos_policies_project_id'))

    op.drop_table('network_qos_policies')
    with op.batch_alter_table('network_address_scopes', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_network_address_scopes_project_id'))

    op.drop_table('network_address_scopes')
