"""subnet pools and address scopes

Revision ID: network_0002
Revises: network_0001
Create Date: 2026-11-24 20:08:20.565702
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

    with op.batch_alter_table('network_subnets', schema=None) as batch_op:
        batch_op.add_column(sa.Column('subnetpool_id', sa.String(length=36), nullable=True))
        batch_op.create_index(batch_op.f('ix_network_subnets_subnetpool_id'), ['subnetpool_id'], unique=False)



def downgrade():
    with op.batch_alter_table('network_subnets', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_network_subnets_subnetpool_id'))
        batch_op.drop_column('subnetpool_id')

    with op.batch_alter_table('network_subnetpools', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_network_subnetpools_project_id'))
        batch_op.drop_index(batch_op.f('ix_network_subnetpools_address_scope_id'))

    op.drop_table('network_subnetpools')
    with op.batch_alter_table('network_address_scopes', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_network_address_scopes_project_id'))

    op.drop_table('network_address_scopes')
