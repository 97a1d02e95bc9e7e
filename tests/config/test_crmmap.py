"""The `[crm.<source>]` tables: stage ids to stage names, accounts to datasets, checked at
start with the entry named; the defaults when a source has no table."""

import pytest

from workers.config import crmmap
from workers.config.needed import ConfigError
from workers.config.stagemap import StageMap

SOURCES = ("hubspot", "pipedrive")


def test_without_tables_hubspots_default_pipeline_and_pipedrives_win_are_mapped():
    tables = crmmap.load({}, SOURCES, StageMap(), {"default"})
    assert tables["hubspot"]["stages"]["closedwon"] == "Purchase"
    assert tables["pipedrive"]["stages"] == {"won": "Purchase"}


def test_the_sandbox_maps_its_stand_ins_pipedrive_pipeline_too():
    tables = crmmap.load({}, SOURCES, StageMap(), {"default"}, sandbox=True)
    assert tables["pipedrive"]["stages"]["3"] == "Schedule"


def test_a_table_replaces_the_defaults_and_takes_stage_names_and_negative_stages():
    doc = {"crm": {"hubspot": {"stages": {"1289471": "Demo booked", "closedlost": "lost"}}}}
    assert crmmap.load(doc, SOURCES, StageMap(), {"default"})["hubspot"]["stages"] == {
        "1289471": "Demo booked",
        "closedlost": "lost",
    }


@pytest.mark.parametrize(
    "doc, where",
    [
        ({"crm": {"hubspot": {"stages": {"closedwon": "Purchased"}}}}, "crm.hubspot.stages.closedwon"),
        ({"crm": {"hubspot": {"stages": {"closedwon": 3}}}}, "crm.hubspot.stages.closedwon"),
        ({"crm": {"pipedrive": {"accounts": {"11728051": "nope"}}}}, "crm.pipedrive.accounts.11728051"),
        ({"crm": {"salesforce": {}}}, "crm"),
        ({"crm": {"hubspot": {"pipelines": {}}}}, "crm.hubspot"),
    ],
)
def test_a_mistake_names_the_entry(doc, where):
    with pytest.raises(ConfigError) as err:
        crmmap.load(doc, SOURCES, StageMap(), {"default"})
    assert str(err.value).startswith(f"LEADRELAY_CONFIG: {where}")


def test_an_unknown_event_name_suggests_the_right_one():
    with pytest.raises(ConfigError) as err:
        crmmap.load({"crm": {"hubspot": {"stages": {"x": "QUALIFIED_LEAD"}}}}, SOURCES, StageMap(), {"default"})
    assert "QualifiedLead" in str(err.value)
