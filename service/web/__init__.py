"""The web service: the dashboard's pages and the JSON API (service.web.api), made by the
app factory in service.web.app."""
