"""small objects' bytes in the database (objectstore_blobs)

Revision ID: objectstore_0003
Revises: objectstore_0002
Create Date: 2026-12-07 07:05:00.000000
"""
from alembic import op
import sqlalchemy as sa

from sqlalchemy.dialects import mysql


revision = 'objectstore_0003'
down_revision = 'objectstore_0002'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('objectstore_blobs',
    sa.Column('id', sa.String(length=64), nullable=False),
    sa.Column('data', sa.LargeBinary().with_variant(mysql.MEDIUMBLOB(), 'mysql', 'mariadb'), nullable=False),
    sa.Column('created', sa.Float(), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )


def downgrade():
    op.drop_table('objectstore_blobs')
