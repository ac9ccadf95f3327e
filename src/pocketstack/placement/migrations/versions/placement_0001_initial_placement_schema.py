"""initial placement schema

Revision ID: placement_0001
Revises: 
Create Date: 2026-11-27 11:38:13.333552
"""
from alembic import op
import sqlalchemy as sa

from sqlalchemy.dialects import mysql

_DT = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mariadb').with_variant(mysql.DATETIME(fsp=6), 'mysql')


revision = 'placement_0001'
down_revision = None
branch_labels = ('placement',)
depends_on = None


def upgrade():

    op.create_table('placement_consumers',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('uuid', sa.String(length=36), nullable=False),
    sa.Column('project_id', sa.String(length=255), nullable=False),
    sa.Column('user_id', sa.String(length=255), nullable=False),
    sa.Column('generation', sa.Integer(), nullable=False),
    sa.Column('consumer_type', sa.String(length=255), nullable=True),
    sa.Column('created_at', _DT, nullable=False),
    sa.Column('updated_at', _DT, nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('uuid')
    )
    with op.batch_alter_table('placement_consumers', schema=None) as batch_op:
        batch_op.create_index('ix_placement_consumers_project_user', ['project_id', 'user_id'], unique=False)

    op.create_table('placement_resource_classes',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('name', sa.String(length=255), nullable=False),
    sa.Column('created_at', _DT, nullable=False),
    sa.Column('updated_at', _DT, nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('name')
    )
    op.create_table('placement_resource_providers',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('uuid', sa.String(length=36), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('generation', sa.Integer(), nullable=False),
    sa.Column('parent_provider_id', sa.Integer(), nullable=True),
    sa.Column('root_provider_id', sa.Integer(), nullable=True),
    sa.Column('created_at', _DT, nullable=False),
    sa.Column('updated_at', _DT, nullable=False),
    sa.ForeignKeyConstraint(['parent_provider_id'], ['placement_resource_providers.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('name'),
    sa.UniqueConstraint('uuid')
    )
    with op.batch_alter_table('placement_resource_providers', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_placement_resource_providers_parent_provider_id'), ['parent_provider_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_placement_resource_providers_root_provider_id'), ['root_provider_id'], unique=False)

    op.create_table('placement_traits',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('name', sa.String(length=255), nullable=False),
    sa.Column('created_at', _DT, nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('name')
    )
    op.create_table('placement_allocations',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('resource_provider_id', sa.Integer(), nullable=False),
    sa.Column('consumer_id', sa.String(length=36), nullable=False),
    sa.Column('resource_class', sa.String(length=255), nullable=False),
    sa.Column('used', sa.BigInteger(), nullable=False),
    sa.Column('created_at', _DT, nullable=False),
    sa.Column('updated_at', _DT, nullable=False),
    sa.ForeignKeyConstraint(['resource_provider_id'], ['placement_resource_providers.id'], ),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('placement_allocations', schema=None) as batch_op:
        batch_op.create_index('ix_placement_allocations_consumer', ['consumer_id'], unique=False)
        batch_op.create_index('ix_placement_allocations_rp_rc', ['resource_provider_id', 'resource_class'], unique=False)

    op.create_table('placement_inventories',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('resource_provider_id', sa.Integer(), nullable=False),
    sa.Column('resource_class', sa.String(length=255), nullable=False),
    sa.Column('total', sa.BigInteger(), nullable=False),
    sa.Column('reserved', sa.BigInteger(), nullable=False),
    sa.Column('min_unit', sa.BigInteger(), nullable=False),
    sa.Column('max_unit', sa.BigInteger(), nullable=False),
    sa.Column('step_size', sa.BigInteger(), nullable=False),
    sa.Column('allocation_ratio', sa.Float(), nullable=False),
    sa.Column('created_at', _DT, nullable=False),
    sa.Column('updated_at', _DT, nullable=False),
    sa.ForeignKeyConstraint(['resource_provider_id'], ['placement_resource_providers.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('resource_provider_id', 'resource_class', name='uq_placement_inventories_rp_rc')
    )
    with op.batch_alter_table('placement_inventories', schema=None) as batch_op:
        batch_op.create_index('ix_placement_inventories_rc', ['resource_class', 'resource_provider_id'], unique=False)

    op.create_table('placement_provider_aggregates',
    sa.Column('resource_provider_id', sa.Integer(), nullable=False),
    sa.Column('aggregate_uuid', sa.String(length=36), nullable=False),
    sa.ForeignKeyConstraint(['resource_provider_id'], ['placement_resource_providers.id'], ),
    sa.PrimaryKeyConstraint('resource_provider_id', 'aggregate_uuid')
    )
    with op.batch_alter_table('placement_provider_aggregates', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_placement_provider_aggregates_aggregate_uuid'), ['aggregate_uuid'], unique=False)

    op.create_table('placement_provider_traits',
    sa.Column('resource_provider_id', sa.Integer(), nullable=False),
    sa.Column('trait', sa.String(length=255), nullable=False),
    sa.ForeignKeyConstraint(['resource_provider_id'], ['placement_resource_providers.id'], ),
    sa.PrimaryKeyConstraint('resource_provider_id', 'trait')
    )
    with op.batch_alter_table('placement_provider_traits', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_placement_provider_traits_trait'), ['trait'], unique=False)




def downgrade():

    with op.batch_alter_table('placement_provider_traits', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_placement_provider_traits_trait'))

    op.drop_table('placement_provider_traits')
    with op.batch_alter_table('placement_provider_aggregates', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_placement_provider_aggregates_aggregate_uuid'))

    op.drop_table('placement_provider_aggregates')
    with op.batch_alter_table('placement_inventories', schema=None) as batch_op:
        batch_op.drop_index('ix_placement_inventories_rc')

    op.drop_table('placement_inventories')
    with op.batch_alter_table('placement_allocations', schema=None) as batch_op:
        batch_op.drop_index('ix_placement_allocations_rp_rc')
        batch_op.drop_index('ix_placement_allocations_consumer')

    op.drop_table('placement_allocations')
    op.drop_table('placement_traits')
    with op.batch_alter_table('placement_resource_providers', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_placement_resource_providers_root_provider_id'))
        batch_op.drop_index(batch_op.f('ix_placement_resource_providers_parent_provider_id'))

    op.drop_table('placement_resource_providers')
    op.drop_table('placement_resource_classes')
    with op.batch_alter_table('placement_consumers', schema=None) as batch_op:
        batch_op.drop_index('ix_placement_consumers_project_user')

    op.drop_table('placement_consumers')

