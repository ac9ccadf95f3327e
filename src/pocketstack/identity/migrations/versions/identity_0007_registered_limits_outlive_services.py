"""registered limits outlive their service, as keystone's (no foreign key to the service)

Revision ID: identity_0007
Revises: identity_0006
Create Date: 2026-12-06 17:40:00.000000
"""
from alembic import op
import sqlalchemy as sa


revision = 'identity_0007'
down_revision = 'identity_0006'
branch_labels = None
depends_on = None

_TABLE = 'identity_registered_limits'
# SQLite keeps the constraint unnamed: batch mode names it by this convention to drop it
_CONVENTION = {"fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s"}
_SQLITE_NAME = 'fk_identity_registered_limits_service_id_identity_services'


def upgrade():
    bind = op.get_bind()
    if bind.dialect.name == 'sqlite':
        with op.batch_alter_table(_TABLE, naming_convention=_CONVENTION) as batch_op:
            batch_op.drop_constraint(_SQLITE_NAME, type_='foreignkey')
        return
    for fk in sa.inspect(bind).get_foreign_keys(_TABLE):
        if fk['constrained_columns'] == ['service_id'] and fk.get('name'):
            op.drop_constraint(fk['name'], _TABLE, type_='foreignkey')


def downgrade():
    with op.batch_alter_table(_TABLE) as batch_op:
        batch_op.create_foreign_key('fk_registered_limit_service', 'identity_services',
                                    ['service_id'], ['id'], ondelete='CASCADE')
