"""The web dashboard, served under /dashboard by the same process as the APIs.

It is only a client of the public APIs (identity, compute, pocketstack's trace API) with
the logged-in user's token, so policy and project isolation are exactly the API's. The
token stays server-side; the browser holds an opaque session id (sessions.py).
"""
