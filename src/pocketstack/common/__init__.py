"""Pieces every service shares: config, context, errors, database, RPC, policy, tracing."""
