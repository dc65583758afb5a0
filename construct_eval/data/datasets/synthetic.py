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
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from construct_eval.data.datasets import synthetic_words as words
from construct_eval.data.datasets.base import Dataset, Record, text_hash
from construct_eval.data.datasets.synthetic_schemas import SCHEMAS
from construct_eval.data.datasets.synthetic_words import MONTHS

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


def _invoice(rng: random.Random) -> tuple[str, dict[str, Any]]:
    code, symbol = rng.choice(words.CURRENCIES)
    seller, buyer = words.company(rng), words.company(rng)
    while buyer == seller:
        buyer = words.company(rng)
    seller_addr, _, _ = words.address(rng)
    buyer_addr, _, _ = words.address(rng)
    number = f"INV-{rng.randint(2023, 2025)}-{words.digits(rng, 5)}"
    order = words.near_number(rng, number).replace("INV", "PO")
    issue = words.day(rng)
    due = issue + timedelta(days=rng.choice((14, 30, 45))) if rng.random() < 0.8 else None
    delivery = issue - timedelta(days=rng.randint(1, 10))
    items = []
    for _ in range(rng.choice((1, 1, 2, 2, 3, 4))):
        qty = rng.randint(1, 60)
        price = round(rng.uniform(2, 400), 2)
        items.append({"description": rng.choice(words.PRODUCTS), "quantity": qty, "unit_price": price})
    subtotal = round(sum(i["quantity"] * i["unit_price"] for i in items), 2)
    tax_rate = rng.choice((0.0, 0.07, 0.19, 0.2))
    total = round(subtotal * (1 + tax_rate), 2)
    vat = f"{rng.choice(('DE', 'FR', 'NL', 'GB'))}{words.digits(rng, 9)}" if rng.random() < 0.7 else None
    contact = words.person(rng) if rng.random() < 0.6 else None
    payment = (
        {
            "iban": f"DE{words.digits(rng, 2)} {words.digits(rng, 4)} {words.digits(rng, 4)} {words.digits(rng, 4)} {words.digits(rng, 4)} {words.digits(rng, 2)}",
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
        f"Invoice date: {words.spoken_date(rng, issue)}   Delivery date: {words.spoken_date(rng, delivery)}",
        f"Your order: {order}",
        "",
    ]
    for it in items:
        line_total = it["quantity"] * it["unit_price"]
        lines.append(
            f"- {it['quantity']} x {it['description']} at {words.money(rng, it['unit_price'], symbol, code)} each"
            f" = {words.money(rng, line_total, symbol, code)}"
        )
    lines += ["", f"Subtotal: {words.money(rng, subtotal, symbol, code)}"]
    lines.append(f"VAT {int(tax_rate * 100)}%: {words.money(rng, total - subtotal, symbol, code)}")
    lines.append(f"Total due: {words.money(rng, total, symbol, code)}")
    if due:
        lines.append(f"Please pay by {words.spoken_date(rng, due)}.")
    else:
        lines.append("Payment on receipt.")
    if payment:
        lines.append(f"Bank transfer to IBAN {payment['iban']}, quoting {number} as reference.")
    lines.append(f"Questions? Contact {words.person(rng)} in our accounts team.")
    truth = {
        "invoice_number": number,
        "issue_date": words.iso(issue),
        "due_date": words.iso(due) if due else None,
        "currency": code,
        "seller": {"name": seller, "vat_id": vat, "address": seller_addr},
        "buyer": {"name": buyer, "contact_person": contact},
        "line_items": items,
        "payment": payment,
        "total_amount": total,
    }
    return "\n".join(lines), truth


def _insurance_claim(rng: random.Random) -> tuple[str, dict[str, Any]]:
    claimant, other = words.person(rng), words.person(rng)
    claim_id = f"CLM-{words.digits(rng, 6)}"
    incident = words.day(rng)
    report = incident + timedelta(days=rng.randint(0, 6))
    channel = rng.choice(("Email", "Phone", "Portal"))
    phone = f"+49 {words.digits(rng, 3)} {words.digits(rng, 7)}" if rng.random() < 0.6 else None
    auto = rng.random() < 0.6
    policy = (
        {
            "policy_number": f"POL-{words.digits(rng, 9)}",
            "coverage_type": "Auto" if auto else rng.choice(("Property", "Liability")),
        }
        if rng.random() < 0.8
        else None
    )
    objects: list[dict[str, Any]] = []
    if auto:
        for _ in range(rng.choice((1, 1, 2))):
            objects.append(
                {"object_type": "Vehicle", "description": rng.choice(words.VEHICLES), "year": rng.randint(2005, 2024)}
            )
    else:
        objects.append(
            {
                "object_type": "Building",
                "description": rng.choice(words.BUILDINGS),
                "year": rng.randint(1950, 2020) if rng.random() < 0.7 else None,
            }
        )
    damage = rng.randrange(500, 40000, 50) if rng.random() < 0.75 else None
    police = f"PR-{incident.year}-{words.digits(rng, 4)}" if rng.random() < 0.5 else None
    opener = {
        "Email": f"Subject: claim {claim_id}\n\nDear claims team,",
        "Phone": f"Call note, claim {claim_id} (caller: {claimant}).",
        "Portal": f"Online claim form, reference {claim_id}.",
    }[channel]
    parts = [opener]
    parts.append(
        f"This is {claimant}. On {words.spoken_date(rng, incident)} "
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
        parts.append(f"The other driver said they are insured under POL-{words.digits(rng, 9)}.")
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
    parts.append(f"Reported on {words.spoken_date(rng, report)}.")
    truth = {
        "claim_id": claim_id,
        "incident_date": words.iso(incident),
        "report_date": words.iso(report),
        "channel": channel,
        "claimant": {"name": claimant, "phone": phone},
        "policy": policy,
        "insured_objects": objects,
        "estimated_damage": damage,
        "police_report_number": police,
    }
    return "\n".join(parts), truth


def _shipping_notice(rng: random.Random) -> tuple[str, dict[str, Any]]:
    shipment = f"SHP-{words.digits(rng, 7)}"
    previous = words.near_number(rng, shipment)
    carrier = rng.choice(words.CARRIERS)
    tracking = f"{carrier[:2].upper()}{words.digits(rng, 10)}"
    ship = words.day(rng)
    eta = ship + timedelta(days=rng.randint(1, 9))
    (origin_city, origin_country), (dest_city, dest_country) = rng.sample(words.CITIES, 2)
    contact = words.person(rng) if rng.random() < 0.6 else None
    packages = [
        {"package_id": f"PKG-{words.digits(rng, 5)}", "weight_kg": round(rng.uniform(0.5, 80), 1)}
        for _ in range(rng.choice((1, 2, 2, 3)))
    ]
    cross_border = origin_country != dest_country and rng.random() < 0.7
    customs = (
        {"hs_code": f"{words.digits(rng, 4)}.{words.digits(rng, 2)}", "declared_value": round(rng.uniform(50, 9000), 2)}
        if cross_border
        else None
    )
    lines = [
        f"Shipping notice {shipment}",
        f"Dear {contact or 'customer'},",
        f"your goods left our warehouse in {origin_city}, {origin_country} on {words.spoken_date(rng, ship)} with {carrier}.",
        f"Tracking number: {tracking}. Expected delivery to {dest_city}, {dest_country}: {words.spoken_date(rng, eta)}.",
        f"(This replaces notice {previous}, which was cancelled.)",
        "Packages:",
    ]
    for p in packages:
        lines.append(f"  {p['package_id']}: {p['weight_kg']} kg")
    total = round(sum(p["weight_kg"] for p in packages), 1)
    lines.append(f"Total weight {total} kg.")
    if customs:
        lines.append(f"Customs: HS code {customs['hs_code']}, declared value {customs['declared_value']:,.2f} EUR.")
    lines.append(f"Returns go to our depot in {rng.choice(words.CITIES)[0]}.")
    truth = {
        "shipment_id": shipment,
        "ship_date": words.iso(ship),
        "expected_delivery": words.iso(eta),
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


def generate(n: int = 40, seed: int = 0, kinds: Sequence[str] | None = None) -> Dataset:
    """``n`` documents, cycling through the kinds; each record carries its kind's schema.

    ``kinds`` keeps only documents of those kinds: the first ``n`` of the same sequence whose kind
    is one of them, so each keeps its index, id and text (``synthetic-shipping_notice-00002`` is
    the same document in both sets, and a reply cached for one answers the other). Recorded in
    the source only when given, so earlier runs' sources read as before."""
    if n < 1:
        raise ValueError("n must be at least 1")
    chosen = tuple(KINDS) if kinds is None else tuple(kinds)
    unknown = [k for k in chosen if k not in KINDS]
    if unknown or not chosen:
        raise ValueError(f"synthetic kinds must be some of {', '.join(KINDS)}; got {', '.join(chosen) or 'none'}")
    indices = [i for i in range(n * len(KINDS)) if KINDS[i % len(KINDS)] in chosen][:n]
    records = [make_record(i, seed)[0] for i in indices]
    source: dict[str, Any] = {"kind": "synthetic", "n": n, "seed": seed}
    if kinds is not None:
        source["kinds"] = list(chosen)
    first = chosen[0] if kinds is not None else KINDS[0]
    return Dataset(
        "synthetic",
        SCHEMAS[first],
        SYSTEM_PROMPT,
        records,
        LABEL_RULES,
        source,
        embed_documents=True,
        notes="three document kinds with their own schemas (see Record.schema)"
        if kinds is None
        else f"only the document kinds {', '.join(chosen)}, each with its own schema (see Record.schema)",
    )


__all__ = ["KINDS", "LABEL_RULES", "MONTHS", "SCHEMAS", "SYSTEM_PROMPT", "generate", "make_record"]
