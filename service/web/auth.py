"""Logging in and out of the dashboard, and who the current request acts as.

A session cookie (Flask-Login) after the login form, or an API token sent as
`Authorization: Bearer <token>` by scripts and CI. The cookie holds only the id of a session
kept in PostgreSQL (service.accounts.sessions): each request reads that row and its user, so
a logout, a password or role change or a disable ends the session at once, and so do its idle
and absolute lifetimes (service.web.cookies). Logins are throttled per account and per client
address (service.accounts.throttle), with one message whatever failed.
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
from flask_login import (
    AnonymousUserMixin,
    LoginManager,
    UserMixin,
    current_user,
    login_user,
    logout_user,
)
from flask_wtf import FlaskForm
from wtforms import PasswordField, StringField
from wtforms.validators import InputRequired

from service.accounts import services
from service.accounts import sessions as server_sessions
from service.accounts.exceptions import BadCredentials, InvalidToken
from service.accounts.models import User

from .access import require_role
from .cookies import lifetimes, login_limits

bp = Blueprint("auth", __name__)


@dataclass(frozen=True)
class CurrentUser(UserMixin):
    """The user a request acts as (a plain value: no ORM object outlives its session)."""

    id: int
    name: str
    role: str
    by_token: bool = False
    session_id: str | None = None  # of the server-side session; None for a token

    @classmethod
    def of(cls, user: User, by_token: bool = False,
           session_id: str | None = None) -> CurrentUser:
        return cls(id=user.id, name=user.name, role=user.role, by_token=by_token,
                   session_id=session_id)

    def get_id(self) -> str | None:
        """What Flask-Login keeps in the cookie: the session's id, never the user's."""
        return self.session_id


class Anonymous(AnonymousUserMixin):
    name = None
    role = None
    by_token = False
    session_id = None


class LoginForm(FlaskForm):
    name = StringField("User", validators=[InputRequired()])
    password = PasswordField("Password", validators=[InputRequired()])


@bp.route("/login", methods=["GET", "POST"])
def login():
    form = LoginForm()
    error = None
    if form.validate_on_submit():
        address = request.remote_addr or "unknown"
        with _sessions().begin() as session:  # commits a failure as well as a session
            try:
                found = services.log_in(session, form.name.data, form.password.data,
                                        address, login_limits(current_app))
                user = CurrentUser.of(found, session_id=server_sessions.open_session(
                    session, found, address))
            except BadCredentials as exc:
                error = str(exc)
        if error is None:
            cookie_session.clear()  # nothing from before the login carries over (fixation)
            cookie_session.permanent = True  # expires with the session's absolute lifetime
            login_user(user)
            return redirect(_local_target(request.args.get("next")))
    return render_template("login.html", form=form, error=error), 401 if error else 200


@bp.post("/logout")
@require_role("viewer")  # anyone logged in may end their own session
def logout():
    if current_user.session_id:
        with _sessions().begin() as session:
            server_sessions.end_session(session, current_user.session_id)
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


def _user_of_session(session_id: str) -> CurrentUser | None:
    with _sessions().begin() as session:  # commits when the session was last seen
        user = server_sessions.user_of_session(session, session_id, lifetimes(current_app))
        return CurrentUser.of(user, session_id=session_id) if user is not None else None


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
