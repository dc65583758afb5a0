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
from datetime import date, timedelta
from typing import Any

from construct_eval.data.datasets import synthetic_words as words
from construct_eval.data.datasets.base import Dataset, Record, text_hash
from construct_eval.data.datasets.synthetic_schemas import SCHEMAS
from construct_eval.data.datasets.synthetic_words import MONTHS

KINDS = ("invoice", "insurance_claim", "shipping_notice")
"""The kinds the default set cycles through: document ``i`` is of kind ``KINDS[i % 3]``."""

VERSIONED_KINDS = {"shipping_notice_v2": "shipping_notice"}
"""Later versions of a kind, each with the schema of the kind it revises (the value). They are
outside the cycle, so the documents, ids and hashes of every set made before stay as they were; a
set of one of them has its own stream of documents (``synthetic-shipping_notice_v2-00000``, ...).

``shipping_notice_v2`` (issue 35): the first version names the destination's contact only in
the salutation ("Dear Wei Ueda,"), so a generator's errors on it were one omission, decided by a
coin with p = 0.6. This version writes the contact in one of five ways (the salutation, an
"Attn:" line, a delivery-contact line, a hand-over request, the person who signs), signs every
notice with a sender who is not the contact, sometimes reschedules the delivery (a superseded
date next to the expected one) and writes a light package's weight (under 10 kg) in grams."""

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


CONTACT_LINES = {
    "salutation": "Dear {c},",
    "attention": "Attn: {c}",
    "contact_line": "Delivery contact: {c}.",
    "hand_over": "Please hand the goods to {c} at the receiving dock.",
    "signs": "{c} will sign for the delivery in {city}.",
}
"""The line in which ``shipping_notice_v2`` names the destination's contact ``{c}`` (``{city}``: the
destination's city), by phrasing; written by the notice and read back by :func:`contact_phrasing`."""
CONTACT_PHRASINGS = tuple(CONTACT_LINES)
"""How ``shipping_notice_v2`` names the destination's contact (one at random per notice)."""


def _shipping_notice(rng: random.Random, varied: bool = False) -> tuple[str, dict[str, Any]]:
    """A shipping notice; ``varied`` makes the ``shipping_notice_v2`` version (see
    :data:`VERSIONED_KINDS`). The first version's draws come first and in the same order, so
    ``varied=False`` writes the same notices as before the second version existed."""
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
    if not varied:
        lines = [
            f"Shipping notice {shipment}",
            f"Dear {contact or 'customer'},",
            f"your goods left our warehouse in {origin_city}, {origin_country} on {words.spoken_date(rng, ship)} with {carrier}.",
            f"Tracking number: {tracking}. Expected delivery to {dest_city}, {dest_country}: {words.spoken_date(rng, eta)}.",
            f"(This replaces notice {previous}, which was cancelled.)",
            "Packages:",
        ]
    else:
        route = ((origin_city, origin_country), (dest_city, dest_country))
        lines = _varied_lines(rng, shipment, contact, route, ship, eta, carrier, tracking, previous)
    for p in packages:
        grams = varied and p["weight_kg"] < 10 and rng.random() < 0.5
        lines.append(
            f"  {p['package_id']}: {round(p['weight_kg'] * 1000)} g"
            if grams
            else f"  {p['package_id']}: {p['weight_kg']} kg"
        )
    total = round(sum(p["weight_kg"] for p in packages), 1)
    lines.append(f"Total weight {total} kg.")
    if customs:
        lines.append(f"Customs: HS code {customs['hs_code']}, declared value {customs['declared_value']:,.2f} EUR.")
    lines.append(f"Returns go to our depot in {rng.choice(words.CITIES)[0]}.")
    if varied:
        lines += ["Kind regards,", f"{_other_person(rng, contact)}, {carrier} customer service"]
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


def contact_phrasing(text: str, contact: str | None) -> str | None:
    """How a ``shipping_notice_v2`` names its destination's ``contact`` (one of
    :data:`CONTACT_PHRASINGS`; None when it has none), read back from the text, so that an analysis
    of a recorded run can split a field's errors by phrasing without a field in the record."""
    if contact is None:
        return None
    found = [name for name, line in CONTACT_LINES.items() if line.partition("{city}")[0].format(c=contact) in text]
    if len(found) != 1:
        raise ValueError(f"the notice names its contact {contact!r} in {len(found)} known ways, not one")
    return found[0]


def _other_person(rng: random.Random, not_this: str | None) -> str:
    """A person named in the notice who is not the destination's contact (the sender)."""
    while (name := words.person(rng)) == not_this:
        pass
    return name


def _varied_lines(
    rng: random.Random,
    shipment: str,
    contact: str | None,
    route: tuple[tuple[str, str], tuple[str, str]],
    ship: date,
    eta: date,
    carrier: str,
    tracking: str,
    previous: str,
) -> list[str]:
    """The second version's opening: the contact in one of :data:`CONTACT_PHRASINGS` (a greeting
    that names nobody when it is not the salutation) and, in about a third of the notices, a
    superseded delivery date before the expected one."""
    (origin_city, origin_country), (dest_city, dest_country) = route
    phrasing = rng.choice(CONTACT_PHRASINGS) if contact else None
    named = CONTACT_LINES[phrasing].format(c=contact, city=dest_city) if phrasing else ""
    anonymous = rng.choice(("Dear customer,", "Hello,", "Dear receiving team,"))
    lines = [f"Shipping notice {shipment}"]
    if phrasing == "attention":
        lines.append(named)
    lines.append(named if phrasing == "salutation" else anonymous)
    lines.append(
        f"your goods left our warehouse in {origin_city}, {origin_country} on {words.spoken_date(rng, ship)} with {carrier}."
    )
    lines.append(f"Tracking number: {tracking}.")
    expected = words.spoken_date(rng, eta)
    if rng.random() < 0.35:
        planned = eta + timedelta(days=rng.choice((-1, 1)) * rng.randint(1, 4))
        if planned <= ship:  # a delivery is never planned before the goods leave: moved the other way
            planned = eta + (eta - planned)
        lines.append(
            f"The delivery to {dest_city}, {dest_country}, first planned for {words.spoken_date(rng, planned)},"
            f" is now expected on {expected}."
        )
    else:
        lines.append(f"Expected delivery to {dest_city}, {dest_country}: {expected}.")
    if phrasing in ("contact_line", "hand_over", "signs"):  # after the delivery's date
        lines.append(named)
    lines += [f"(This replaces notice {previous}, which was cancelled.)", "Packages:"]
    return lines


_MAKERS = {
    "invoice": _invoice,
    "insurance_claim": _insurance_claim,
    "shipping_notice": _shipping_notice,
    "shipping_notice_v2": lambda rng: _shipping_notice(rng, varied=True),
}


def make_record(index: int, seed: int = 0, kind: str | None = None) -> tuple[Record, dict[str, Any]]:
    """Document ``index`` of the dataset with this seed, and its schema.

    Without ``kind``, the default set's document (its kind is ``KINDS[index % 3]``); with a kind of
    :data:`VERSIONED_KINDS`, document ``index`` of that kind's own stream."""
    if kind is None or kind in KINDS:
        made = KINDS[index % len(KINDS)]
        if kind not in (None, made):
            raise ValueError(f"synthetic document {index} is a {made}, not a {kind}")
        stream = f"construct-eval-synthetic/{seed}/{index}"
    elif kind in VERSIONED_KINDS:
        made, stream = kind, f"construct-eval-synthetic/{seed}/{kind}/{index}"
    else:
        raise ValueError(f"unknown synthetic kind {kind!r}")
    text, truth = _MAKERS[made](random.Random(stream))
    schema = SCHEMAS[VERSIONED_KINDS.get(made, made)]
    return Record(f"synthetic-{made}-{index:05d}", text, truth, text_hash(text), schema=schema), schema


def generate(n: int = 40, seed: int = 0, kinds: Sequence[str] | None = None) -> Dataset:
    """``n`` documents, cycling through the kinds; each record carries its kind's schema.

    ``kinds`` keeps only documents of those kinds: the first ``n`` of the same sequence whose kind
    is one of them, so each keeps its index, id and text (``synthetic-shipping_notice-00002`` is
    the same document in both sets, and a reply cached for one answers the other). Recorded in
    the source only when given, so earlier runs' sources read as before. A kind of
    :data:`VERSIONED_KINDS` stands alone (its documents are not in the cycle): ``n`` documents of
    its own stream."""
    if n < 1:
        raise ValueError("n must be at least 1")
    chosen = tuple(KINDS) if kinds is None else tuple(kinds)
    known = (*KINDS, *VERSIONED_KINDS)
    unknown = [k for k in chosen if k not in known]
    if unknown or not chosen:
        raise ValueError(f"synthetic kinds must be some of {', '.join(known)}; got {', '.join(chosen) or 'none'}")
    versioned = [k for k in chosen if k in VERSIONED_KINDS]
    if versioned and len(chosen) > 1:
        raise ValueError(
            f"the synthetic kind {versioned[0]} is a later version with its own documents: choose it alone"
        )
    if versioned:
        records = [make_record(i, seed, versioned[0])[0] for i in range(n)]
        first = VERSIONED_KINDS[versioned[0]]
    else:
        indices = [i for i in range(n * len(KINDS)) if KINDS[i % len(KINDS)] in chosen][:n]
        records = [make_record(i, seed)[0] for i in indices]
        first = chosen[0] if kinds is not None else KINDS[0]
    source: dict[str, Any] = {"kind": "synthetic", "n": n, "seed": seed}
    if kinds is not None:
        source["kinds"] = list(chosen)
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


__all__ = [
    "CONTACT_LINES",
    "CONTACT_PHRASINGS",
    "KINDS",
    "LABEL_RULES",
    "MONTHS",
    "SCHEMAS",
    "SYSTEM_PROMPT",
    "VERSIONED_KINDS",
    "contact_phrasing",
    "generate",
    "make_record",
]
