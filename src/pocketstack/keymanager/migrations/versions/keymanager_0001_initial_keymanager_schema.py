"""the key manager's tables: secrets and their consumers, project keys, metadata,
containers and their consumers, ACLs, quotas, orders

Revision ID: keymanager_0001
Revises:
Create Date: 2026-12-06 17:51:06.464939
"""
from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

# microsecond precision on MariaDB/MySQL too (common/db.py's _DateTime)
_DT = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mariadb').with_variant(
    mysql.DATETIME(fsp=6), 'mysql')


revision = 'keymanager_0001'
down_revision = None
branch_labels = ('keymanager',)
depends_on = None


def upgrade():
    op.create_table('keymanager_acls',
    sa.Column('entity_type', sa.String(length=16), nullable=False),
    sa.Column('entity_id', sa.String(length=36), nullable=False),
    sa.Column('operation', sa.String(length=16), nullable=False),
    sa.Column('project_access', sa.Boolean(), nullable=False),
    sa.Column('users', sa.JSON(), nullable=False),
    sa.Column('created', _DT, nullable=False),
    sa.Column('updated', _DT, nullable=False),
    sa.PrimaryKeyConstraint('entity_type', 'entity_id', 'operation')
    )
    op.create_table('keymanager_containers',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('project_id', sa.String(length=64), nullable=False),
    sa.Column('creator_id', sa.String(length=64), nullable=True),
    sa.Column('name', sa.String(length=255), nullable=True),
    sa.Column('type', sa.String(length=32), nullable=False),
    sa.Column('created', _DT, nullable=False),
    sa.Column('updated', _DT, nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('keymanager_containers', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_keymanager_containers_project_id'), ['project_id'], unique=False)

    op.create_table('keymanager_orders',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('project_id', sa.String(length=64), nullable=False),
    sa.Column('creator_id', sa.String(length=64), nullable=True),
    sa.Column('type', sa.String(length=32), nullable=False),
    sa.Column('meta', sa.JSON(), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('secret_id', sa.String(length=36), nullable=True),
    sa.Column('container_id', sa.String(length=36), nullable=True),
    sa.Column('created', _DT, nullable=False),
    sa.Column('updated', _DT, nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('keymanager_orders', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_keymanager_orders_project_id'), ['project_id'], unique=False)

    op.create_table('keymanager_project_keys',
    sa.Column('project_id', sa.String(length=64), nullable=False),
    sa.Column('wrapped_key', sa.LargeBinary(), nullable=False),
    sa.Column('created', _DT, nullable=False),
    sa.PrimaryKeyConstraint('project_id')
    )
    op.create_table('keymanager_project_quotas',
    sa.Column('project_id', sa.String(length=64), nullable=False),
    sa.Column('quotas', sa.JSON(), nullable=False),
    sa.PrimaryKeyConstraint('project_id')
    )
    op.create_table('keymanager_secrets',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('project_id', sa.String(length=64), nullable=False),
    sa.Column('creator_id', sa.String(length=64), nullable=True),
    sa.Column('name', sa.String(length=255), nullable=True),
    sa.Column('secret_type', sa.String(length=80), nullable=False),
    sa.Column('algorithm', sa.String(length=255), nullable=True),
    sa.Column('bit_length', sa.Integer(), nullable=True),
    sa.Column('mode', sa.String(length=255), nullable=True),
    sa.Column('expiration', _DT, nullable=True),
    sa.Column('content_type', sa.String(length=255), nullable=True),
    sa.Column('ciphertext', sa.LargeBinary(), nullable=True),
    sa.Column('created', _DT, nullable=False),
    sa.Column('updated', _DT, nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('keymanager_secrets', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_keymanager_secrets_project_id'), ['project_id'], unique=False)

    op.create_table('keymanager_consumers',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('container_id', sa.String(length=36), nullable=False),
    sa.Column('project_id', sa.String(length=64), nullable=False),
    sa.Column('name', sa.String(length=255), nullable=False),
    sa.Column('url', sa.String(length=255), nullable=False),
    sa.Column('created', _DT, nullable=False),
    sa.Column('updated', _DT, nullable=False),
    sa.ForeignKeyConstraint(['container_id'], ['keymanager_containers.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('container_id', 'name', 'url')
    )
    with op.batch_alter_table('keymanager_consumers', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_keymanager_consumers_container_id'), ['container_id'], unique=False)

    op.create_table('keymanager_container_secrets',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('container_id', sa.String(length=36), nullable=False),
    sa.Column('secret_id', sa.String(length=36), nullable=False),
    sa.Column('name', sa.String(length=255), nullable=True),
    sa.ForeignKeyConstraint(['container_id'], ['keymanager_containers.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('keymanager_container_secrets', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_keymanager_container_secrets_container_id'), ['container_id'], unique=False)

    op.create_table('keymanager_secret_consumers',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('secret_id', sa.String(length=36), nullable=False),
    sa.Column('project_id', sa.String(length=64), nullable=False),
    sa.Column('service', sa.String(length=255), nullable=False),
    sa.Column('resource_type', sa.String(length=255), nullable=False),
    sa.Column('resource_id', sa.String(length=36), nullable=False),
    sa.Column('created', _DT, nullable=False),
    sa.Column('updated', _DT, nullable=False),
    sa.ForeignKeyConstraint(['secret_id'], ['keymanager_secrets.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('secret_id', 'service', 'resource_type', 'resource_id')
    )
    with op.batch_alter_table('keymanager_secret_consumers', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_keymanager_secret_consumers_secret_id'), ['secret_id'], unique=False)

    op.create_table('keymanager_secret_metadata',
    sa.Column('secret_id', sa.String(length=36), nullable=False),
    sa.Column('key', sa.String(length=255), nullable=False),
    sa.Column('value', sa.String(length=255), nullable=False),
    sa.ForeignKeyConstraint(['secret_id'], ['keymanager_secrets.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('secret_id', 'key')
    )


def downgrade():
    op.drop_table('keymanager_secret_metadata')
    with op.batch_alter_table('keymanager_secret_consumers', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_keymanager_secret_consumers_secret_id'))

    op.drop_table('keymanager_secret_consumers')
    with op.batch_alter_table('keymanager_container_secrets', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_keymanager_container_secrets_container_id'))

    op.drop_table('keymanager_container_secrets')
    with op.batch_alter_table('keymanager_consumers', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_keymanager_consumers_container_id'))

    op.drop_table('keymanager_consumers')
    with op.batch_alter_table('keymanager_secrets', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_keymanager_secrets_project_id'))

    op.drop_table('keymanager_secrets')
    op.drop_table('keymanager_project_quotas')
    op.drop_table('keymanager_project_keys')
    with op.batch_alter_table('keymanager_orders', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_keymanager_orders_project_id'))

    op.drop_table('keymanager_orders')
    with op.batch_alter_table('keymanager_containers', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_keymanager_containers_project_id'))

    op.drop_table('keymanager_containers')
    op.drop_table('keymanager_acls')
