"""provider_auth: a volume's CHAP credentials for its iSCSI export (cinder's column)

Revision ID: volume_0009
Revises: volume_0008
Create Date: 2026-11-27 20:15:00
"""
from alembic import op
import sqlalchemy as sa


revision = 'volume_0009'
down_revision = 'volume_0008'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('volume_volumes') as batch_op:
        batch_op.add_column(sa.Column('provider_auth', sa.String(length=255), nullable=True))


def downgrade():
    with op.batch_alter_table('volume_volumes') as batch_op:
        batch_op.drop_column('provider_auth')
