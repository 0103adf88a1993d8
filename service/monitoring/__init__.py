"""Prometheus and Alertmanager: the embedded servers, the service's metrics, the alerts the
webhook records on runs, and the clusters' health as the dashboard and metrics read it."""
