"""Upstream placement 16.0.0 on wsgiref (a thread per request) for placement_candidates.py.

    python3 -m venv /tmp/placement-venv
    /tmp/placement-venv/bin/pip install openstack-placement==16.0.0
    # /tmp/upl/placement.conf: [api] auth_strategy = noauth2
    #                          [placement_database] connection = sqlite:////tmp/upl/placement.db
    /tmp/placement-venv/bin/placement-manage --config-file /tmp/upl/placement.conf db sync
    OS_PLACEMENT_CONFIG_DIR=/tmp/upl /tmp/placement-venv/bin/python \
        bench/placement_upstream_serve.py 18778
"""
import os
import socketserver
import sys
from wsgiref import simple_server

os.environ.setdefault("OS_PLACEMENT_CONFIG_DIR", "/tmp/upl")
from placement.wsgi import api  # noqa: E402

app = api.init_application() if hasattr(api, "init_application") else api.application


class Server(socketserver.ThreadingMixIn, simple_server.WSGIServer):
    daemon_threads = True


class Quiet(simple_server.WSGIRequestHandler):
    def log_message(self, *a):
        pass


httpd = simple_server.make_server("127.0.0.1", int(sys.argv[1]), app, server_class=Server,
                                  handler_class=Quiet)
httpd.serve_forever()
