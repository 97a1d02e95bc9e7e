"""What the CRM tests of this folder share: a signed post to a CRM route, and the Lead Ads
lead (Joe@Example.com) a CRM's person turns out to be, delivered first."""

import pytest

from helpers import delivered_lead, post_signed


@pytest.fixture
def post_crm(client, env):
    return lambda name, body: post_signed(client, name, body, env)


@pytest.fixture
def lead(graph, post_meta, work):
    """The Lead Ads lead the CRM's person is (Joe@Example.com), delivered; its HubSpot deal
    and Pipedrive person in the stand-in."""
    delivered_lead(graph, post_meta, work, 3600)
    return graph.add_crm_person("joe@example.com", amount=4800, currency="EUR")
