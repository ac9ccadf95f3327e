"""A backup's own copy of an encrypted volume's key, and the volume's type (to restore
into a volume of that type), as cinder's backups.encryption_key_id

Revision ID: volume_0011
Revises: volume_0010
Create Date: 2026-12-07 00:05:00
"""
from alembic import op
import sqlalchemy as sa


revision = 'volume_0011'
down_revision = 'volume_0010'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('volume_backups') as batch_op:
        batch_op.add_column(sa.Column('encryption_key_id', sa.String(length=36),
                                      nullable=True))
        batch_op.add_column(sa.Column('volume_type_id', sa.String(length=36),
                                      nullable=True))


def downgrade():
    with op.batch_alter_table('volume_backups') as batch_op:
        batch_op.drop_column('volume_type_id')
        batch_op.drop_column('encryption_key_id')
