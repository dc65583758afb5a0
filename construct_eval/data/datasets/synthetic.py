"""The project's own extraction dataset, generated from a seed with no network.

Three kinds of business document (invoices, insurance claims, shipping notices), each with
its own JSON schema: nested objects, optional sections (null when the document does not
have them) and lists of objects. Documents are written as realistic prose with the
distractors extraction models stumble on: two or three dates, a second party, numbers that
look alike (an order number next to the invoice number, a subtotal next to the total), and
values written in another format than the schema asks for (``March 4, 2024`` for
``2024-03-04``, ``1,234.50`` for ``1234.5``). The ground truth is exact by construction.

Each document gets its own random stream (``seed`` and index), so document ``i`` is the same
whatever ``n`` is, and 10,000 documents take a few seconds.
"""

from __future__ import annotations

import random
from datetime import date, timedelta
from typing import Any

from construct_eval.data.datasets.base import Dataset, Record, text_hash

KINDS = ("invoice", "insurance_claim", "shipping_notice")

SYSTEM_PROMPT = (
    "You extract structured data from business documents. Read the document and return one JSON "
    "object that follows the given JSON schema exactly. Write dates as YYYY-MM-DD and amounts as "
    "plain numbers. Use null for a value or a section the document does not give. Return only "
    "the JSON object."
)

LABEL_RULES: dict[str, Any] = {
    "strings": "normalized",
    "enum_fields": ["currency", "coverage_type", "object_type", "carrier", "channel"],
    "dates": "exact",
    "numeric_tolerance": 0.0,
    "string_lists": "set",
    "empty_list_is_null": False,
}

_FIRST = [
    "Anna",
    "Ben",
    "Carla",
    "David",
    "Elena",
    "Farid",
    "Grace",
    "Hiro",
    "Ines",
    "Jonas",
    "Kofi",
    "Lena",
    "Marco",
    "Nadia",
    "Omar",
    "Priya",
    "Quinn",
    "Rosa",
    "Sven",
    "Tara",
    "Umar",
    "Vera",
    "Wei",
    "Ximena",
    "Yusuf",
    "Zoe",
]
_LAST = [
    "Alvarez",
    "Becker",
    "Chen",
    "Dubois",
    "Eriksen",
    "Fischer",
    "Garcia",
    "Haddad",
    "Ito",
    "Jensen",
    "Kowalski",
    "Larsen",
    "Moreau",
    "Novak",
    "Okafor",
    "Petrov",
    "Quist",
    "Rossi",
    "Schmidt",
    "Tanaka",
    "Ueda",
    "Varga",
    "Weber",
    "Xu",
    "Yilmaz",
    "Zimmermann",
]
_COMPANY_A = [
    "Northwind",
    "Bluepeak",
    "Harbor",
    "Greenline",
    "Silverleaf",
    "Ironwood",
    "Brightwater",
    "Redstone",
    "Clearpath",
    "Summit",
]
_COMPANY_B = [
    "Logistics",
    "Supplies",
    "Analytics",
    "Foods",
    "Components",
    "Textiles",
    "Instruments",
    "Printing",
    "Pharma",
    "Energy",
]
_SUFFIX = ("GmbH", "Ltd", "Inc.", "S.A.", "B.V.", "AG")
_CITIES = (
    ("Hamburg", "Germany"),
    ("Lyon", "France"),
    ("Rotterdam", "Netherlands"),
    ("Porto", "Portugal"),
    ("Gdansk", "Poland"),
    ("Leeds", "United Kingdom"),
    ("Valencia", "Spain"),
    ("Turin", "Italy"),
    ("Aarhus", "Denmark"),
    ("Graz", "Austria"),
)
_STREETS = [
    "Market Street",
    "Harbour Road",
    "Linden Allee",
    "Station Square",
    "Mill Lane",
    "Kingsway",
    "Rue du Port",
    "Via Roma",
]
_PRODUCTS = (
    "steel brackets",
    "printer toner cartridges",
    "LED panel lights",
    "office chairs",
    "laboratory gloves",
    "packaging film rolls",
    "network switches",
    "ceramic tiles",
    "hydraulic hoses",
    "cotton tote bags",
)
_CURRENCIES = (("EUR", "€"), ("USD", "$"), ("GBP", "£"))
_CARRIERS = ("DHL", "UPS", "FedEx", "DPD", "GLS")
_VEHICLES = ("Toyota Corolla", "Volkswagen Golf", "Ford Focus", "Skoda Octavia", "Renault Clio", "BMW 320d")
_BUILDINGS = ("detached house", "apartment", "warehouse", "retail unit")
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]


# --------------------------------------------------------------------------- formatting


def _iso(d: date) -> str:
    return d.isoformat()


def _spoken_date(rng: random.Random, d: date) -> str:
    style = rng.randrange(4)
    if style == 0:
        return f"{MONTHS[d.month - 1]} {d.day}, {d.year}"
    if style == 1:
        return f"{d.day} {MONTHS[d.month - 1]} {d.year}"
    if style == 2:
        return f"{d.day:02d}.{d.month:02d}.{d.year}"
    return d.isoformat()


def _money(rng: random.Random, amount: float, symbol: str, code: str) -> str:
    text = f"{amount:,.2f}"
    if rng.random() < 0.5:
        return f"{symbol}{text}"
    return f"{text} {code}"


def _person(rng: random.Random) -> str:
    return f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"


def _company(rng: random.Random) -> str:
    return f"{rng.choice(_COMPANY_A)} {rng.choice(_COMPANY_B)} {rng.choice(_SUFFIX)}"


def _address(rng: random.Random) -> tuple[str, str, str]:
    city, country = rng.choice(_CITIES)
    return f"{rng.randint(1, 240)} {rng.choice(_STREETS)}, {city}", city, country


def _digits(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789") for _ in range(n))


def _near_number(rng: random.Random, ident: str) -> str:
    """A distractor that looks like ``ident``: same shape, two digits changed."""
    chars = list(ident)
    spots = [i for i, c in enumerate(chars) if c.isdigit()]
    for i in rng.sample(spots, min(2, len(spots))):
        chars[i] = str((int(chars[i]) + rng.randint(1, 9)) % 10)
    return "".join(chars)


def _day(rng: random.Random, start: date = date(2023, 1, 1), span: int = 700) -> date:
    return start + timedelta(days=rng.randrange(span))


# --------------------------------------------------------------------------- schemas


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
            "carrier": {"enum": list(_CARRIERS)},
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


# --------------------------------------------------------------------------- documents


def _invoice(rng: random.Random) -> tuple[str, dict[str, Any]]:
    code, symbol = rng.choice(_CURRENCIES)
    seller, buyer = _company(rng), _company(rng)
    while buyer == seller:
        buyer = _company(rng)
    seller_addr, _, _ = _address(rng)
    buyer_addr, _, _ = _address(rng)
    number = f"INV-{rng.randint(2023, 2025)}-{_digits(rng, 5)}"
    order = _near_number(rng, number).replace("INV", "PO")
    issue = _day(rng)
    due = issue + timedelta(days=rng.choice((14, 30, 45))) if rng.random() < 0.8 else None
    delivery = issue - timedelta(days=rng.randint(1, 10))
    items = []
    for _ in range(rng.choice((1, 1, 2, 2, 3, 4))):
        qty = rng.randint(1, 60)
        price = round(rng.uniform(2, 400), 2)
        items.append({"description": rng.choice(_PRODUCTS), "quantity": qty, "unit_price": price})
    subtotal = round(sum(i["quantity"] * i["unit_price"] for i in items), 2)
    tax_rate = rng.choice((0.0, 0.07, 0.19, 0.2))
    total = round(subtotal * (1 + tax_rate), 2)
    vat = f"{rng.choice(('DE', 'FR', 'NL', 'GB'))}{_digits(rng, 9)}" if rng.random() < 0.7 else None
    contact = _person(rng) if rng.random() < 0.6 else None
    payment = (
        {
            "iban": f"DE{_digits(rng, 2)} {_digits(rng, 4)} {_digits(rng, 4)} {_digits(rng, 4)} {_digits(rng, 4)} {_digits(rng, 2)}",
            "reference": number,
        }
        if rng.random() < 0.7
        else None
    )
    lines = [f"{seller}", seller_addr]
    if vat:
        lines.append(f"VAT ID: {vat}")
    lines += ["", f"Bill to: {buyer}, {buyer_addr}"]
    if contact:
        lines.append(f"Attn: {contact}")
    lines += [
        "",
        f"INVOICE {number}",
        f"Invoice date: {_spoken_date(rng, issue)}   Delivery date: {_spoken_date(rng, delivery)}",
        f"Your order: {order}",
        "",
    ]
    for it in items:
        line_total = it["quantity"] * it["unit_price"]
        lines.append(
            f"- {it['quantity']} x {it['description']} at {_money(rng, it['unit_price'], symbol, code)} each"
            f" = {_money(rng, line_total, symbol, code)}"
        )
    lines += ["", f"Subtotal: {_money(rng, subtotal, symbol, code)}"]
    lines.append(f"VAT {int(tax_rate * 100)}%: {_money(rng, total - subtotal, symbol, code)}")
    lines.append(f"Total due: {_money(rng, total, symbol, code)}")
    if due:
        lines.append(f"Please pay by {_spoken_date(rng, due)}.")
    else:
        lines.append("Payment on receipt.")
    if payment:
        lines.append(f"Bank transfer to IBAN {payment['iban']}, quoting {number} as reference.")
    lines.append(f"Questions? Contact {_person(rng)} in our accounts team.")
    truth = {
        "invoice_number": number,
        "issue_date": _iso(issue),
        "due_date": _iso(due) if due else None,
        "currency": code,
        "seller": {"name": seller, "vat_id": vat, "address": seller_addr},
        "buyer": {"name": buyer, "contact_person": contact},
        "line_items": items,
        "payment": payment,
        "total_amount": total,
    }
    return "\n".join(lines), truth


def _insurance_claim(rng: random.Random) -> tuple[str, dict[str, Any]]:
    claimant, other = _person(rng), _person(rng)
    claim_id = f"CLM-{_digits(rng, 6)}"
    incident = _day(rng)
    report = incident + timedelta(days=rng.randint(0, 6))
    channel = rng.choice(("Email", "Phone", "Portal"))
    phone = f"+49 {_digits(rng, 3)} {_digits(rng, 7)}" if rng.random() < 0.6 else None
    auto = rng.random() < 0.6
    policy = (
        {
            "policy_number": f"POL-{_digits(rng, 9)}",
            "coverage_type": "Auto" if auto else rng.choice(("Property", "Liability")),
        }
        if rng.random() < 0.8
        else None
    )
    objects: list[dict[str, Any]] = []
    if auto:
        for _ in range(rng.choice((1, 1, 2))):
            objects.append(
                {"object_type": "Vehicle", "description": rng.choice(_VEHICLES), "year": rng.randint(2005, 2024)}
            )
    else:
        objects.append(
            {
                "object_type": "Building",
                "description": rng.choice(_BUILDINGS),
                "year": rng.randint(1950, 2020) if rng.random() < 0.7 else None,
            }
        )
    damage = rng.randrange(500, 40000, 50) if rng.random() < 0.75 else None
    police = f"PR-{incident.year}-{_digits(rng, 4)}" if rng.random() < 0.5 else None
    opener = {
        "Email": f"Subject: claim {claim_id}\n\nDear claims team,",
        "Phone": f"Call note, claim {claim_id} (caller: {claimant}).",
        "Portal": f"Online claim form, reference {claim_id}.",
    }[channel]
    parts = [opener]
    parts.append(
        f"This is {claimant}. On {_spoken_date(rng, incident)} "
        + (
            f"my {objects[0]['description']} ({objects[0]['year']}) was hit by a car driven by {other}."
            if auto
            else f"water came through the ceiling of my {objects[0]['description']}"
            + (f", built in {objects[0]['year']}." if objects[0]["year"] else ".")
        )
    )
    if auto and len(objects) > 1:
        parts.append(f"My second car, a {objects[1]['year']} {objects[1]['description']}, was also damaged.")
    if policy:
        parts.append(f"My policy number is {policy['policy_number']} ({policy['coverage_type'].lower()} cover).")
    if auto:
        parts.append(f"The other driver said they are insured under POL-{_digits(rng, 9)}.")
    if damage is not None:
        parts.append(
            f"A garage estimated the damage at about {damage:,} euros; an earlier quote said {damage + rng.randrange(100, 900, 50):,}."
            if rng.random() < 0.5
            else f"The repair estimate is {damage:,} EUR."
        )
    else:
        parts.append("I do not have a repair estimate yet.")
    if police:
        parts.append(f"The police came; their report number is {police}.")
    if phone:
        parts.append(f"You can reach me on {phone}.")
    parts.append(f"Reported on {_spoken_date(rng, report)}.")
    truth = {
        "claim_id": claim_id,
        "incident_date": _iso(incident),
        "report_date": _iso(report),
        "channel": channel,
        "claimant": {"name": claimant, "phone": phone},
        "policy": policy,
        "insured_objects": objects,
        "estimated_damage": damage,
        "police_report_number": police,
    }
    return "\n".join(parts), truth


def _shipping_notice(rng: random.Random) -> tuple[str, dict[str, Any]]:
    shipment = f"SHP-{_digits(rng, 7)}"
    previous = _near_number(rng, shipment)
    carrier = rng.choice(_CARRIERS)
    tracking = f"{carrier[:2].upper()}{_digits(rng, 10)}"
    ship = _day(rng)
    eta = ship + timedelta(days=rng.randint(1, 9))
    (origin_city, origin_country), (dest_city, dest_country) = rng.sample(_CITIES, 2)
    contact = _person(rng) if rng.random() < 0.6 else None
    packages = [
        {"package_id": f"PKG-{_digits(rng, 5)}", "weight_kg": round(rng.uniform(0.5, 80), 1)}
        for _ in range(rng.choice((1, 2, 2, 3)))
    ]
    cross_border = origin_country != dest_country and rng.random() < 0.7
    customs = (
        {"hs_code": f"{_digits(rng, 4)}.{_digits(rng, 2)}", "declared_value": round(rng.uniform(50, 9000), 2)}
        if cross_border
        else None
    )
    lines = [
        f"Shipping notice {shipment}",
        f"Dear {contact or 'customer'},",
        f"your goods left our warehouse in {origin_city}, {origin_country} on {_spoken_date(rng, ship)} with {carrier}.",
        f"Tracking number: {tracking}. Expected delivery to {dest_city}, {dest_country}: {_spoken_date(rng, eta)}.",
        f"(This replaces notice {previous}, which was cancelled.)",
        "Packages:",
    ]
    for p in packages:
        lines.append(f"  {p['package_id']}: {p['weight_kg']} kg")
    total = round(sum(p["weight_kg"] for p in packages), 1)
    lines.append(f"Total weight {total} kg.")
    if customs:
        lines.append(f"Customs: HS code {customs['hs_code']}, declared value {customs['declared_value']:,.2f} EUR.")
    lines.append(f"Returns go to our depot in {rng.choice(_CITIES)[0]}.")
    truth = {
        "shipment_id": shipment,
        "ship_date": _iso(ship),
        "expected_delivery": _iso(eta),
        "carrier": carrier,
        "tracking_number": tracking,
        "origin": {"city": origin_city, "country": origin_country},
        "destination": {"city": dest_city, "country": dest_country, "contact": contact},
        "packages": packages,
        "customs": customs,
    }
    return "\n".join(lines), truth


_MAKERS = {"invoice": _invoice, "insurance_claim": _insurance_claim, "shipping_notice": _shipping_notice}


def make_record(index: int, seed: int = 0) -> tuple[Record, dict[str, Any]]:
    """Document ``index`` of the dataset with this seed, and its schema."""
    rng = random.Random(f"construct-eval-synthetic/{seed}/{index}")
    kind = KINDS[index % len(KINDS)]
    text, truth = _MAKERS[kind](rng)
    return Record(f"synthetic-{kind}-{index:05d}", text, truth, text_hash(text), schema=SCHEMAS[kind]), SCHEMAS[kind]


def generate(n: int = 40, seed: int = 0) -> Dataset:
    """``n`` documents, cycling through the kinds; each record carries its kind's schema."""
    if n < 1:
        raise ValueError("n must be at least 1")
    records = [make_record(i, seed)[0] for i in range(n)]
    return Dataset(
        "synthetic",
        SCHEMAS[KINDS[0]],
        SYSTEM_PROMPT,
        records,
        LABEL_RULES,
        {"kind": "synthetic", "n": n, "seed": seed},
        embed_documents=True,
        notes="three document kinds with their own schemas (see Record.schema)",
    )
