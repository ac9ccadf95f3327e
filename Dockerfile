# The all-in-one pocketstack cloud in a container:
#   docker build -t pocketstack .
#   docker run --rm -p 8000:8000 -e POCKETSTACK_ADMIN_PASSWORD=secret pocketstack
# Clients then use http://127.0.0.1:8000/identity (user admin, project admin, the
# password above), or the clouds.yaml: docker cp <container>:/data/clouds.yaml .
# State is in /data (mount a volume there to keep it). Publishing on another address or
# port? Set public_url to it: -e POCKETSTACK_PUBLIC_URL=http://HOST:PORT.
FROM python:3.12-slim

# qemu-img: volumes from qcow2 images, and images from volumes in other formats.
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends qemu-utils \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /src
COPY pyproject.toml README.md ./
COPY src ./src
RUN pip install --no-cache-dir . \
    && useradd --create-home --uid 1000 pocketstack \
    && mkdir /data && chown pocketstack /data

USER pocketstack
ENV POCKETSTACK_HOME=/data POCKETSTACK_PUBLIC_URL=http://127.0.0.1:8000
EXPOSE 8000
# The catalog and links carry public_url (where clients reach the cloud), not the
# container's own address.
CMD ["sh", "-c", "printf '[DEFAULT]\\npublic_url = %s\\n' \"$POCKETSTACK_PUBLIC_URL\" > /tmp/pocketstack.conf && exec pocketstack up --host 0.0.0.0 --port 8000 --config-file /tmp/pocketstack.conf"]
