"""Logging in and out of the dashboard, and who the current request acts as.

A session cookie (Flask-Login) after the login form, or an API token sent as
`Authorization: Bearer <token>` by scripts and CI. Either way the user is read from the
database at each request, so a role change or a disabled user takes effect at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from flask import (
    Blueprint,
    Flask,
    current_app,
    g,
    redirect,
    render_template,
    request,
    url_for,
)
from flask import session as cookie_session
from flask_login import AnonymousUserMixin, LoginManager, UserMixin, login_user, logout_user
from flask_wtf import FlaskForm
from wtforms import PasswordField, StringField
from wtforms.validators import InputRequired

from service.accounts import services
from service.accounts.exceptions import BadCredentials, InvalidToken
from service.accounts.models import User

from .access import require_role

bp = Blueprint("auth", __name__)


@dataclass(frozen=True)
class CurrentUser(UserMixin):
    """The user a request acts as (a plain value: no ORM object outlives its session)."""

    id: int
    name: str
    role: str
    by_token: bool = False

    @classmethod
    def of(cls, user: User, by_token: bool = False) -> CurrentUser:
        return cls(id=user.id, name=user.name, role=user.role, by_token=by_token)


class Anonymous(AnonymousUserMixin):
    name = None
    role = None
    by_token = False


class LoginForm(FlaskForm):
    name = StringField("User", validators=[InputRequired()])
    password = PasswordField("Password", validators=[InputRequired()])


@bp.route("/login", methods=["GET", "POST"])
def login():
    form = LoginForm()
    error = None
    if form.validate_on_submit():
        with _sessions().begin() as session:
            try:
                user = CurrentUser.of(services.authenticate(session, form.name.data,
                                                            form.password.data))
            except BadCredentials as exc:
                error = str(exc)
        if error is None:
            cookie_session.clear()  # nothing from before the login carries over (fixation)
            login_user(user)
            return redirect(_local_target(request.args.get("next")))
    return render_template("login.html", form=form, error=error), 401 if error else 200


@bp.post("/logout")
@require_role("viewer")  # anyone logged in may end their own session
def logout():
    logout_user()
    cookie_session.clear()
    return redirect(url_for("auth.login"))


def _local_target(target: str | None) -> str:
    """Where to go after the login: only a path on this site, never another host."""
    if target:
        parts = urlsplit(target)
        if (not parts.scheme and not parts.netloc and target.startswith("/")
                and not target.startswith("//") and "\\" not in target):
            return target
    return url_for("runs.index")


def _sessions():
    return current_app.extensions["faultline.sessions"]


def _user_of_session(user_id: str) -> CurrentUser | None:
    if not user_id.isdigit():
        return None
    with _sessions()() as session:
        user = services.active_user(session, int(user_id))
        return CurrentUser.of(user) if user is not None else None


def _user_of_token(req) -> CurrentUser | None:
    header = req.headers.get("Authorization")
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        g.auth_error = "send the API token as 'Authorization: Bearer <token>'"
        return None
    with _sessions().begin() as session:  # commits the token's last use
        try:
            return CurrentUser.of(services.user_for_token(session, token.strip()),
                                  by_token=True)
        except InvalidToken as exc:
            g.auth_error = str(exc)
            return None


def init_app(app: Flask) -> None:
    manager = LoginManager()
    manager.login_view = "auth.login"
    manager.anonymous_user = Anonymous
    manager.user_loader(_user_of_session)
    manager.request_loader(_user_of_token)
    manager.init_app(app)
    app.register_blueprint(bp)
