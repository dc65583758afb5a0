"""The JSON schemas of the synthetic set's three document kinds: nested objects, optional sections
(null when a document does not have them) and lists of objects."""

from __future__ import annotations

from typing import Any

from construct_eval.data.datasets.synthetic_words import CARRIERS


def _nullable(t: str) -> dict[str, Any]:
    return {"type": [t, "null"]}


def _obj(props: dict[str, Any], *, nullable: bool = False, description: str | None = None) -> dict[str, Any]:
    node: dict[str, Any] = {
        "type": "object",
        "additionalProperties": False,
        "required": list(props),
        "properties": props,
    }
    if nullable:
        node = {"anyOf": [node, {"type": "null"}]}
    if description:
        node["description"] = description
    return node


_DATE = {"type": "string", "description": "YYYY-MM-DD"}

SCHEMAS: dict[str, dict[str, Any]] = {
    "invoice": _obj(
        {
            "invoice_number": {"type": "string"},
            "issue_date": _DATE,
            "due_date": {"type": ["string", "null"], "description": "YYYY-MM-DD"},
            "currency": {"enum": ["EUR", "USD", "GBP"]},
            "seller": _obj({"name": {"type": "string"}, "vat_id": _nullable("string"), "address": {"type": "string"}}),
            "buyer": _obj({"name": {"type": "string"}, "contact_person": _nullable("string")}),
            "line_items": {
                "type": "array",
                "items": _obj(
                    {
                        "description": {"type": "string"},
                        "quantity": {"type": "integer"},
                        "unit_price": {"type": "number"},
                    }
                ),
            },
            "payment": _obj(
                {"iban": {"type": "string"}, "reference": {"type": "string"}},
                nullable=True,
                description="null when the invoice gives no bank details",
            ),
            "total_amount": {"type": "number", "description": "the amount due, including tax"},
        }
    ),
    "insurance_claim": _obj(
        {
            "claim_id": {"type": "string"},
            "incident_date": _DATE,
            "report_date": _DATE,
            "channel": {"enum": ["Email", "Phone", "Portal"]},
            "claimant": _obj({"name": {"type": "string"}, "phone": _nullable("string")}),
            "policy": _obj(
                {"policy_number": {"type": "string"}, "coverage_type": {"enum": ["Auto", "Property", "Liability"]}},
                nullable=True,
                description="the claimant's own policy; null when not given",
            ),
            "insured_objects": {
                "type": "array",
                "items": _obj(
                    {
                        "object_type": {"enum": ["Vehicle", "Building"]},
                        "description": {"type": "string"},
                        "year": _nullable("integer"),
                    }
                ),
            },
            "estimated_damage": _nullable("integer"),
            "police_report_number": _nullable("string"),
        }
    ),
    "shipping_notice": _obj(
        {
            "shipment_id": {"type": "string"},
            "ship_date": _DATE,
            "expected_delivery": _DATE,
            "carrier": {"enum": list(CARRIERS)},
            "tracking_number": {"type": "string"},
            "origin": _obj({"city": {"type": "string"}, "country": {"type": "string"}}),
            "destination": _obj(
                {"city": {"type": "string"}, "country": {"type": "string"}, "contact": _nullable("string")}
            ),
            "packages": {
                "type": "array",
                "items": _obj({"package_id": {"type": "string"}, "weight_kg": {"type": "number"}}),
            },
            "customs": _obj(
                {"hs_code": {"type": "string"}, "declared_value": {"type": "number"}},
                nullable=True,
                description="null for shipments inside one customs area",
            ),
        }
    ),
}
