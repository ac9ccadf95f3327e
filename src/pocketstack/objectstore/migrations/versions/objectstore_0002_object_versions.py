"""object versions (X-Versions-Enabled)

Revision ID: objectstore_0002
Revises: objectstore_0001
Create Date: 2026-12-06 20:45:00.000000
"""
from alembic import op
import sqlalchemy as sa

from sqlalchemy.dialects import mysql

_DT = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mariadb').with_variant(mysql.DATETIME(fsp=6), 'mysql')


def _name(length):
    return sa.LargeBinary(length).with_variant(mysql.VARBINARY(length), 'mysql', 'mariadb')


revision = 'objectstore_0002'
down_revision = 'objectstore_0001'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('objectstore_objects') as batch_op:
        batch_op.add_column(sa.Column('version_id', sa.String(length=20), nullable=True))
    op.create_table('objectstore_versions',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('container_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('name', _name(1024), nullable=False),
    sa.Column('version_id', sa.String(length=20), nullable=False),
    sa.Column('size', sa.BigInteger(), nullable=False),
    sa.Column('etag', sa.String(length=64), nullable=False),
    sa.Column('content_type', sa.String(length=1024), nullable=False),
    sa.Column('timestamp', sa.String(length=20), nullable=False),
    sa.Column('last_modified', _DT, nullable=False),
    sa.Column('meta', sa.JSON(), nullable=False),
    sa.Column('file', sa.String(length=64), nullable=True),
    sa.ForeignKeyConstraint(['container_id'], ['objectstore_containers.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('container_id', 'name', 'version_id', name='uniq_objectstore_versions0container_id0name0version_id')
    )


def downgrade():
    op.drop_table('objectstore_versions')
    with op.batch_alter_table('objectstore_objects') as batch_op:
        batch_op.drop_column('version_id')
