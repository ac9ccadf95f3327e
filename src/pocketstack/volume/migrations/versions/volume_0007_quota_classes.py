"""quota classes

Revision ID: volume_0007
Revises: volume_0006
Create Date: 2026-11-27 15:26:28.289654
"""
from alembic import op
import sqlalchemy as sa


revision = 'volume_0007'
down_revision = 'volume_0006'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('volume_quota_classes',
    sa.Column('class_name', sa.String(length=255), nullable=False),
    sa.Column('resource', sa.String(length=300), nullable=False),
    sa.Column('hard_limit', sa.Integer(), nullable=False),
    sa.PrimaryKeyConstraint('class_name', 'resource')
    )


def downgrade():
    op.drop_table('volume_quota_classes')
