"""initial object storage schema

Revision ID: objectstore_0001
Revises: 
Create Date: 2026-12-06 17:14:59.266114
"""
from alembic import op
import sqlalchemy as sa

from sqlalchemy.dialects import mysql

_DT = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mariadb').with_variant(mysql.DATETIME(fsp=6), 'mysql')


def _name(length):
    # models.Name: UTF-8 bytes, so listings sort by byte value on every engine
    return sa.LargeBinary(length).with_variant(mysql.VARBINARY(length), 'mysql', 'mariadb')


revision = 'objectstore_0001'
down_revision = None
branch_labels = ('objectstore',)
depends_on = None


def upgrade():
    op.create_table('objectstore_accounts',
    sa.Column('name', sa.String(length=256), nullable=False),
    sa.Column('meta', sa.JSON(), nullable=False),
    sa.Column('timestamp', sa.String(length=20), nullable=False),
    sa.Column('created_at', _DT, nullable=False),
    sa.PrimaryKeyConstraint('name')
    )
    op.create_table('objectstore_containers',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('account', sa.String(length=256), nullable=False),
    sa.Column('name', _name(256), nullable=False),
    sa.Column('meta', sa.JSON(), nullable=False),
    sa.Column('timestamp', sa.String(length=20), nullable=False),
    sa.Column('put_timestamp', sa.String(length=20), nullable=False),
    sa.Column('object_count', sa.BigInteger(), nullable=False),
    sa.Column('bytes_used', sa.BigInteger(), nullable=False),
    sa.Column('last_modified', _DT, nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('account', 'name', name='uniq_objectstore_containers0account0name')
    )
    op.create_table('objectstore_objects',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('container_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('name', _name(1024), nullable=False),
    sa.Column('size', sa.BigInteger(), nullable=False),
    sa.Column('etag', sa.String(length=64), nullable=False),
    sa.Column('content_type', sa.String(length=1024), nullable=False),
    sa.Column('timestamp', sa.String(length=20), nullable=False),
    sa.Column('last_modified', _DT, nullable=False),
    sa.Column('meta', sa.JSON(), nullable=False),
    sa.Column('delete_at', sa.BigInteger(), nullable=True),
    sa.Column('file', sa.String(length=64), nullable=False),
    sa.ForeignKeyConstraint(['container_id'], ['objectstore_containers.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('container_id', 'name', name='uniq_objectstore_objects0container_id0name')
    )
    with op.batch_alter_table('objectstore_objects', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_objectstore_objects_delete_at'), ['delete_at'], unique=False)



def downgrade():
    with op.batch_alter_table('objectstore_objects', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_objectstore_objects_delete_at'))

    op.drop_table('objectstore_objects')
    op.drop_table('objectstore_containers')
    op.drop_table('objectstore_accounts')
