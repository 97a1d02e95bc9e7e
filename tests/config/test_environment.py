"""The settings' sources in order: the process's environment, then `.env`, then the
sandbox's generated values."""

from workers.config import environment


def test_a_variable_set_empty_in_the_environment_turns_off_what_dotenv_sets(tmp_path):
    dotenv = tmp_path / ".env"
    dotenv.write_text("LEADRELAY_ADMIN_TOKEN=from-dotenv\nLEADRELAY_API_TOKEN=api-from-dotenv\n")
    environ = {environment.ENV_FILE: str(dotenv), "LEADRELAY_ADMIN_TOKEN": "", "META_APP_SECRET": "s"}
    environ |= {"META_PAGE_ACCESS_TOKEN": "p", "META_CAPI_ACCESS_TOKEN": "c", "LEADRELAY_DATA_DIR": str(tmp_path)}
    environment.apply(environ)
    assert environ["LEADRELAY_ADMIN_TOKEN"] == ""  # the admin page stays off, as asked
    assert environ["LEADRELAY_API_TOKEN"] == "api-from-dotenv"  # unset: .env fills it


def test_a_variable_set_in_the_environment_is_not_replaced_by_dotenv(tmp_path):
    dotenv = tmp_path / ".env"
    dotenv.write_text("LEADRELAY_ADMIN_TOKEN=from-dotenv\n")
    environ = {environment.ENV_FILE: str(dotenv), "LEADRELAY_ADMIN_TOKEN": "mine", "LEADRELAY_DATA_DIR": str(tmp_path)}
    environ |= {"META_APP_SECRET": "s", "META_PAGE_ACCESS_TOKEN": "p", "META_CAPI_ACCESS_TOKEN": "c"}
    environment.apply(environ)
    assert environ["LEADRELAY_ADMIN_TOKEN"] == "mine"
