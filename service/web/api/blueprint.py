"""The API's one blueprint: everything under /api/v1, JSON in and out."""

from flask import Blueprint

bp = Blueprint("api", __name__, url_prefix="/api/v1")
