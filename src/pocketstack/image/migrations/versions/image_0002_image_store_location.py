"""image store and location (rbd store)

Revision ID: image_0002
Revises: image_0001
Create Date: 2026-12-01 10:00:00.000000
"""
from alembic import op
import sqlalchemy as sa

revision = 'image_0002'
down_revision = 'image_0001'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('image_images') as batch_op:
        batch_op.add_column(sa.Column('store', sa.String(length=32), nullable=True))
        batch_op.add_column(sa.Column('location', sa.Text(), nullable=True))
    # Every image with data so far has it in the filesystem store.
    op.execute("UPDATE image_images SET store = 'file' "
               "WHERE status IN ('active', 'deactivated')")


def downgrade():
    with op.batch_alter_table('image_images') as batch_op:
        batch_op.drop_column('location')
        batch_op.drop_column('store')
