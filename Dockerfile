# Faultline's web service and workers (docker-compose.yml). Debian 12 like the labs, so
# python3-rados comes from Debian and matches the clusters' Ceph 16 client.
FROM debian:bookworm-slim

RUN apt-get update -q \
 && apt-get install -y -q --no-install-recommends \
      python3 python3-venv python3-rados ceph-common openssh-client ipmitool nftables \
      nodejs npm ca-certificates \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY . /app
# the chart library (Chart.js from npm), served under /vendor/
RUN cd service/web && npm install --no-audit --no-fund --silent
# --system-site-packages: Debian's rados module; editable: migrations/ and experiments/
# are read from /app
RUN python3 -m venv --system-site-packages /venv \
 && /venv/bin/pip install --no-cache-dir -q -e . \
 && /venv/bin/python -c 'import rados'

ENV PATH=/venv/bin:$PATH \
    FAULTLINE_HOME=/var/lib/faultline \
    FAULTLINE_INVENTORY=/etc/faultline/inventory.yaml
EXPOSE 8080
CMD ["faultline", "serve", "--host", "0.0.0.0", "--port", "8080"]
