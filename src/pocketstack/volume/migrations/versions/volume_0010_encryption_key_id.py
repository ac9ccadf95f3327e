"""encryption_key_id: the key manager's secret with a volume's key (cinder's column)

Revision ID: volume_0010
Revises: volume_0009
Create Date: 2026-12-06 17:46:41
"""
from alembic import op
import sqlalchemy as sa


revision = 'volume_0010'
down_revision = 'volume_0009'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('volume_volumes') as batch_op:
        batch_op.add_column(sa.Column('encryption_key_id', sa.String(length=36),
                                      nullable=True))


def downgrade():
    with op.batch_alter_table('volume_volumes') as batch_op:
        batch_op.drop_column('encryption_key_id')
