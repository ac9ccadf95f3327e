"""group extra attributes, indexes for assignment and membership look-ups

Revision ID: identity_0002
Revises: identity_0001
Create Date: 2026-11-21 22:36:22.785668
"""
from alembic import op
import sqlalchemy as sa


revision = 'identity_0002'
down_revision = 'identity_0001'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('identity_assignments', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_identity_assignments_actor_id'), ['actor_id'], unique=False)

    with op.batch_alter_table('identity_group_members', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_identity_group_members_group_id'), ['group_id'], unique=False)

    with op.batch_alter_table('identity_groups', schema=None) as batch_op:
        batch_op.add_column(sa.Column('extra', sa.JSON(), nullable=True))



def downgrade():
    with op.batch_alter_table('identity_groups', schema=None) as batch_op:
        batch_op.drop_column('extra')

    with op.batch_alter_table('identity_group_members', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_identity_group_members_group_id'))

    with op.batch_alter_table('identity_assignments', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_identity_assignments_actor_id'))

