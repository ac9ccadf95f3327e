"""TLS client authentication of listeners and TLS to the members of pools

Revision ID: loadbalancer_0002
Revises: loadbalancer_0001
Create Date: 2026-12-06 21:00:00.000000
"""
from alembic import op
import sqlalchemy as sa

revision = 'loadbalancer_0002'
down_revision = 'loadbalancer_0001'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('loadbalancer_listeners') as batch_op:
        batch_op.add_column(sa.Column('client_ca_tls_container_ref', sa.String(length=1024),
                                      nullable=True))
        batch_op.add_column(sa.Column('client_authentication', sa.String(length=16),
                                      nullable=False, server_default='NONE'))
        batch_op.add_column(sa.Column('client_crl_container_ref', sa.String(length=1024),
                                      nullable=True))
    with op.batch_alter_table('loadbalancer_pools') as batch_op:
        batch_op.add_column(sa.Column('tls_container_ref', sa.String(length=1024),
                                      nullable=True))
        batch_op.add_column(sa.Column('ca_tls_container_ref', sa.String(length=1024),
                                      nullable=True))
        batch_op.add_column(sa.Column('crl_container_ref', sa.String(length=1024),
                                      nullable=True))


def downgrade():
    with op.batch_alter_table('loadbalancer_pools') as batch_op:
        for column in ('crl_container_ref', 'ca_tls_container_ref', 'tls_container_ref'):
            batch_op.drop_column(column)
    with op.batch_alter_table('loadbalancer_listeners') as batch_op:
        for column in ('client_crl_container_ref', 'client_authentication',
                       'client_ca_tls_container_ref'):
            batch_op.drop_column(column)
