"""The synthetic set's vocabulary: names, companies, places, products, and how a document writes
dates, amounts and look-alike numbers (each from the document's own random stream)."""

from __future__ import annotations

import random
from datetime import date, timedelta

FIRST = [
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
LAST = [
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
COMPANY_A = [
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
COMPANY_B = [
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
SUFFIX = ("GmbH", "Ltd", "Inc.", "S.A.", "B.V.", "AG")
CITIES = (
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
STREETS = [
    "Market Street",
    "Harbour Road",
    "Linden Allee",
    "Station Square",
    "Mill Lane",
    "Kingsway",
    "Rue du Port",
    "Via Roma",
]
PRODUCTS = (
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
CURRENCIES = (("EUR", "€"), ("USD", "$"), ("GBP", "£"))
CARRIERS = ("DHL", "UPS", "FedEx", "DPD", "GLS")
VEHICLES = ("Toyota Corolla", "Volkswagen Golf", "Ford Focus", "Skoda Octavia", "Renault Clio", "BMW 320d")
BUILDINGS = ("detached house", "apartment", "warehouse", "retail unit")
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


def iso(d: date) -> str:
    return d.isoformat()


def spoken_date(rng: random.Random, d: date) -> str:
    style = rng.randrange(4)
    if style == 0:
        return f"{MONTHS[d.month - 1]} {d.day}, {d.year}"
    if style == 1:
        return f"{d.day} {MONTHS[d.month - 1]} {d.year}"
    if style == 2:
        return f"{d.day:02d}.{d.month:02d}.{d.year}"
    return d.isoformat()


def money(rng: random.Random, amount: float, symbol: str, code: str) -> str:
    text = f"{amount:,.2f}"
    if rng.random() < 0.5:
        return f"{symbol}{text}"
    return f"{text} {code}"


def person(rng: random.Random) -> str:
    return f"{rng.choice(FIRST)} {rng.choice(LAST)}"


def company(rng: random.Random) -> str:
    return f"{rng.choice(COMPANY_A)} {rng.choice(COMPANY_B)} {rng.choice(SUFFIX)}"


def address(rng: random.Random) -> tuple[str, str, str]:
    city, country = rng.choice(CITIES)
    return f"{rng.randint(1, 240)} {rng.choice(STREETS)}, {city}", city, country


def digits(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789") for _ in range(n))


def near_number(rng: random.Random, ident: str) -> str:
    """A distractor that looks like ``ident``: same shape, two digits changed."""
    chars = list(ident)
    spots = [i for i, c in enumerate(chars) if c.isdigit()]
    for i in rng.sample(spots, min(2, len(spots))):
        chars[i] = str((int(chars[i]) + rng.randint(1, 9)) % 10)
    return "".join(chars)


def day(rng: random.Random, start: date = date(2023, 1, 1), span: int = 700) -> date:
    return start + timedelta(days=rng.randrange(span))
