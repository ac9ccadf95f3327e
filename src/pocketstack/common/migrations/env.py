"""Alembic environment: runs on the connection pocketstack hands it (see common/db.py)."""
from alembic import context

from pocketstack.common import db

db.import_models()
connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=db.Base.metadata,
                  render_as_batch=connection.dialect.name == "sqlite")
with context.begin_transaction():
    context.run_migrations()
