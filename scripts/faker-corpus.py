"""Writes a fixed-seed corpus of legitimate form values made with Faker.

Usage: faker-corpus.py OUT.json

Names (many with apostrophes or hyphens), street addresses, free text,
e-mail addresses and URLs in several locales, the kind of values real users
type into forms; the same Faker version and seed give the same file.
"""
import json
import sys

import faker

LOCALES = ["en_US", "en_IE", "fr_FR", "de_DE", "it_IT", "es_ES", "pt_BR", "nl_NL", "pl_PL", "tr_TR", "ja_JP", "zh_CN", "ar_AA", "he_IL", "ru_RU"]
SEED = 20261204
PER_LOCALE = 8  # values of each kind per locale


def main():
    out = sys.argv[1]
    values = []
    for loc in LOCALES:
        f = faker.Faker(loc)
        f.seed_instance(SEED)
        for _ in range(PER_LOCALE):
            values.append(("name", loc, f.name()))
            values.append(("address", loc, f.address().replace("\n", ", ")))
            values.append(("text", loc, f.text(max_nb_chars=160).replace("\n", " ")))
            values.append(("email", loc, f.email()))
            values.append(("url", loc, f.url() + f.uri_path()))
    # Names with apostrophes: Irish, Italian and French surnames.
    f = faker.Faker(["en_IE", "it_IT", "fr_FR"])
    f.seed_instance(SEED)
    for last in ["O'Brien", "O'Connor", "D'Angelo", "D'Amico", "L'Oréal", "Dell'Acqua", "N'Diaye", "O'Neill"]:
        values.append(("name", "apostrophe", f.first_name() + " " + last))
    doc = {"generator": "faker " + faker.VERSION, "seed": SEED, "locales": LOCALES,
           "values": [{"kind": k, "locale": l, "value": v} for k, l, v in values]}
    with open(out, "w", encoding="utf-8") as fh:
        json.dump(doc, fh, ensure_ascii=False, indent=1)
        fh.write("\n")


if __name__ == "__main__":
    main()
