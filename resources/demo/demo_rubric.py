"""Twenty hand-written rubric samples about the fictional HIRSCHKRAUT® liqueur (synthetic).

Each sample has a question, an LLM-written response, two or three metric traits (shared definitions, reused by
name) and the buckets an LLM bucket assigner produced, including realistic mistakes: an excerpt in the wrong
bucket, a paraphrased excerpt that is not verbatim in the response, a missed item, a denial read as a claim.
`RUBRIC_LABELS` holds the buckets a human corrected (or accepted unchanged) for about half the samples.
"""
from __future__ import annotations

from typing import Any

# -- instruction texts (fn/tn buckets hold these verbatim) -------------------------------------------------------------
ABV = "States the alcohol content is 35% vol."
HERBS = "Mentions that it is made from thirty-three herbs"
PLACE = "Names Tannried as the place where it is made"
COLD = "Recommends serving it ice-cold"
NOT_ABV = "States an alcohol content other than 35% vol."
NOT_HEALTH = "Claims the liqueur has health or medicinal benefits"
NOT_WARM = "Recommends serving it warm or hot"

AGE = "Mentions the legal drinking age or that the product is for adults only"
MODERATION = "Advises drinking in moderation or responsibly"
NO_DRIVE = "Warns against drinking and driving"
HELP = "Points to a help line or information site about alcohol"

MARK = "Writes the brand name as HIRSCHKRAUT® on first mention"
TAGLINE = "Uses the approved tagline exactly (“Thirty-three herbs. One wild heart.”)"
RESP_MSG = "Includes a responsible-drinking message"
C_SOCIAL = "Suggests drinking improves social, sexual or professional success"
C_HEALTH = "Makes a health or medicinal claim"
C_EXCESS = "Encourages excessive or rapid consumption"
C_DRIVE = "Associates drinking with driving or operating machinery"

R_BASE = "Names HIRSCHKRAUT® as the base spirit"
R_QTY = "Gives 4 cl as the quantity of HIRSCHKRAUT®"
R_MIXER = "Names tonic water as the mixer"
R_GARNISH = "Mentions an orange slice garnish"
R_ICE = "Says to serve over ice"

H_YEAR = "States the company was founded in 1878"
H_FAMILY = "Names the Auerbach family as the founders or owners"
H_SECRET = "Mentions that the recipe is kept secret"
H_NOT_YEAR = "Gives a founding year other than 1878"
H_NOT_ANIMAL = "Claims the recipe contains animal ingredients"
H_NOT_MEDICINE = "Claims the liqueur was invented or sold as a medicine"

FULL = ["precision", "recall", "specificity", "accuracy", "f1"]
PRF = ["precision", "recall", "f1"]

FACTS, RESP, COMPL, RECIPE, HERITAGE = (
    "Product Facts", "Responsible Drinking Coverage", "Marketing Compliance", "Long Drink Recipe", "Heritage Accuracy")


def _trait(name: str, description: str, mode: str, metrics: list[str], tp: list[str], tn: list[str]) -> dict[str, Any]:
    return {"name": name, "description": description, "evaluation_mode": mode, "metrics": metrics,
            "tp_instructions": tp, "tn_instructions": tn, "repeated_extraction": True}


TRAITS: dict[str, dict[str, Any]] = {
    FACTS: _trait(FACTS, "Core product facts from the HIRSCHKRAUT® fact sheet, and known wrong claims.", "full_matrix",
                  FULL, [ABV, HERBS, PLACE, COLD], [NOT_ABV, NOT_HEALTH, NOT_WARM]),
    RESP: _trait(RESP, "Responsible-drinking elements an answer about alcohol should contain.", "tp_only",
                 PRF, [AGE, MODERATION, NO_DRIVE, HELP], []),
    COMPL: _trait(COMPL, "Brand and advertising-code requirements for consumer-facing copy.", "full_matrix",
                  FULL, [MARK, TAGLINE, RESP_MSG], [C_SOCIAL, C_HEALTH, C_EXCESS, C_DRIVE]),
    RECIPE: _trait(RECIPE, "The approved Hirsch Tonic recipe.", "tp_only",
                   ["precision", "recall", "f1"], [R_BASE, R_QTY, R_MIXER, R_GARNISH, R_ICE], []),
    HERITAGE: _trait(HERITAGE, "Heritage facts from the approved fact sheet, and myths that must not be repeated.",
                     "full_matrix", ["precision", "recall", "specificity", "f1"],
                     [H_YEAR, H_FAMILY, H_SECRET], [H_NOT_YEAR, H_NOT_ANIMAL, H_NOT_MEDICINE]),
}


def B(tp: tuple[str, ...] | list[str] = (), fn: tuple[str, ...] | list[str] = (),
      fp: tuple[str, ...] | list[str] = (), tn: tuple[str, ...] | list[str] = ()) -> dict[str, list[str]]:
    return {"tp": list(tp), "fn": list(fn), "fp": list(fp), "tn": list(tn)}


FACTS_TN = (NOT_ABV, NOT_HEALTH, NOT_WARM)
HERITAGE_TN = (H_NOT_YEAR, H_NOT_ANIMAL, H_NOT_MEDICINE)
COMPL_TN = (C_SOCIAL, C_HEALTH, C_EXCESS, C_DRIVE)

RUBRIC_SAMPLES: list[dict[str, Any]] = [
    {  # 1: a missed item (Tannried is there)
        "question": "What is HIRSCHKRAUT® and how should it be served?",
        "response": "HIRSCHKRAUT® is a herbal liqueur made in Tannried from thirty-three herbs, following a secret recipe of the Auerbach family since 1878. It has 35% vol. and is best served ice-cold, straight from the freezer, or as a Hirsch Tonic.",
        "buckets": {
            FACTS: B(["35% vol.", "thirty-three herbs", "best served ice-cold"], [PLACE], [], FACTS_TN),
            HERITAGE: B(["since 1878", "the Auerbach family", "a secret recipe"], [], [], HERITAGE_TN),
        },
    },
    {  # 2: the social-success claim slipped through as "absent"
        "question": "Write an Instagram caption for HIRSCHKRAUT® for the winter season.",
        "response": "Snow outside, stag spirit inside ❄️🦌 An ice-cold HIRSCHKRAUT® with friends is all it takes to become the life of the party. Thirty-three herbs. One wild heart.",
        "buckets": {
            COMPL: B(["An ice-cold HIRSCHKRAUT®", "Thirty-three herbs. One wild heart."], [RESP_MSG], [], COMPL_TN),
            RESP: B([], [AGE, MODERATION, NO_DRIVE, HELP], [], []),
        },
    },
    {  # 3: wrong ABV counted as a TP; a paraphrased garnish; the ice missed
        "question": "Give me the recipe for the Hirsch Tonic.",
        "response": "Hirsch Tonic: fill a highball glass with ice, add 4 cl HIRSCHKRAUT®, top up with 12 cl tonic water and garnish with a slice of orange. HIRSCHKRAUT® has 38% vol., so one is plenty.",
        "buckets": {
            RECIPE: B(["HIRSCHKRAUT®", "4 cl", "12 cl tonic water", "garnish with an orange slice"], [R_ICE], [], []),
            FACTS: B(["HIRSCHKRAUT® has 38% vol."], [HERBS, PLACE, COLD], [], FACTS_TN),
        },
    },
    {  # 4: a denial read as a health claim; a doctor taken for a help line
        "question": "A customer writes: “Does HIRSCHKRAUT® help against a cold?” Draft a short reply.",
        "response": "Thank you for your message! HIRSCHKRAUT® is a herbal liqueur with 35% vol. and not a medicine, so it cannot help against a cold; please ask your doctor or pharmacist. If you enjoy it, enjoy HIRSCHKRAUT® responsibly and only if you are of legal drinking age.",
        "buckets": {
            FACTS: B(["35% vol."], [HERBS, PLACE, COLD], ["not a medicine, so it cannot help against a cold"], [NOT_ABV, NOT_WARM]),
            COMPL: B(["HIRSCHKRAUT®", "Enjoy HIRSCHKRAUT® responsibly"], [TAGLINE], [], COMPL_TN),
            RESP: B(["legal drinking age", "enjoy HIRSCHKRAUT® responsibly", "please ask your doctor or pharmacist"],
                    [NO_DRIVE, HELP], [], []),
        },
    },
    {  # 5: an animal-ingredient myth recorded as absent
        "question": "Tell me the history of HIRSCHKRAUT® in three sentences.",
        "response": "HIRSCHKRAUT® was created in 1878 by Johann Auerbach in the village of Tannried. His recipe of thirty-three herbs, which originally included deer antler extract, is still a family secret. Today the fifth generation of the Auerbach family runs the distillery.",
        "buckets": {
            HERITAGE: B(["created in 1878", "Johann Auerbach", "still a family secret"], [], [], HERITAGE_TN),
            FACTS: B(["thirty-three herbs", "in the village of Tannried"], [ABV, COLD], [], FACTS_TN),
        },
    },
    {  # 6: over-strict: a safe boat reference taken for drink-driving
        "question": "Write a two-sentence radio spot for the HIRSCHKRAUT® summer campaign.",
        "response": "Summer, lake, friends — and an ice-cold HIRSCHKRAUT® when the boat is back at the dock. Thirty-three herbs. One wild heart. Enjoy HIRSCHKRAUT® responsibly.",
        "buckets": {
            COMPL: B(["HIRSCHKRAUT®", "Thirty-three herbs. One wild heart.", "Enjoy HIRSCHKRAUT® responsibly."], [],
                     ["when the boat is back at the dock"], (C_SOCIAL, C_HEALTH, C_EXCESS)),
            RESP: B(["Enjoy HIRSCHKRAUT® responsibly."], [AGE, NO_DRIVE, HELP], [], []),
        },
    },
    {  # 7: two excerpts for one item; the age statement missed
        "question": "How strong is HIRSCHKRAUT® and can I drink it before driving home from a party?",
        "response": "HIRSCHKRAUT® has 35% vol. Please don't drink and drive: if you plan to drink, arrange a taxi or a designated driver, and always enjoy in moderation. Only adults of legal drinking age should drink alcohol.",
        "buckets": {
            FACTS: B(["35% vol."], [HERBS, PLACE, COLD], [], FACTS_TN),
            RESP: B(["Please don't drink and drive", "arrange a taxi or a designated driver", "always enjoy in moderation"],
                    [AGE, HELP], [], []),
        },
    },
    {  # 8: a wrong mixer counted as TP
        "question": "Suggest a HIRSCHKRAUT® long drink for a garden party.",
        "response": "Try a Garden Hirsch: 4 cl HIRSCHKRAUT®, 10 cl ginger ale, a squeeze of lime and a sprig of mint over crushed ice. Perfect for sunny afternoons – and it's so light you can have as many as you like!",
        "buckets": {
            RECIPE: B(["4 cl HIRSCHKRAUT®", "10 cl ginger ale", "over crushed ice"], [R_GARNISH], ["a squeeze of lime"], []),
            RESP: B([], [AGE, MODERATION, NO_DRIVE, HELP], [], []),
        },
    },
    {  # 9: a paraphrased excerpt ("33 herbs") not verbatim in the response
        "question": "Write a short product description for our online shop.",
        "response": "HIRSCHKRAUT® Kräuterlikör, 0.7 l, 35% vol.: thirty-three herbs from the Bavarian Forest, distilled in Tannried. Serve ice-cold. Thirty-three herbs. One wild heart. Enjoy HIRSCHKRAUT® responsibly.",
        "buckets": {
            FACTS: B(["35% vol.", "33 herbs from the Bavarian Forest", "distilled in Tannried", "Serve ice-cold."], [], [], FACTS_TN),
            COMPL: B(["HIRSCHKRAUT® Kräuterlikör", "Thirty-three herbs. One wild heart.", "Enjoy HIRSCHKRAUT® responsibly."],
                     [], [], COMPL_TN),
        },
    },
    {  # 10: mostly right
        "question": "What makes HIRSCHKRAUT® different from other herbal liqueurs?",
        "response": "Unlike the cheap, sugary competition, HIRSCHKRAUT® is made from thirty-three herbs by the Auerbach family in Tannried since 1878. It is served ice-cold and, thanks to its herbs, is even good for digestion.",
        "buckets": {
            FACTS: B(["thirty-three herbs", "in Tannried", "served ice-cold"], [ABV], ["good for digestion"], (NOT_ABV, NOT_WARM)),
            HERITAGE: B(["by the Auerbach family", "since 1878"], [H_SECRET], [], HERITAGE_TN),
        },
    },
    {  # 11: a safe shuttle bus flagged, the free refills missed
        "question": "Draft the text of a flyer for a HIRSCHKRAUT® tasting evening.",
        "response": "HIRSCHKRAUT® Tasting Night in Tannried: taste three vintages of our herbal liqueur, with free refills all evening and a shuttle bus back to town. 18+ only. Thirty-three herbs. One wild heart.",
        "buckets": {
            COMPL: B(["HIRSCHKRAUT® Tasting Night", "Thirty-three herbs. One wild heart."], [RESP_MSG],
                     ["a shuttle bus back to town"], (C_SOCIAL, C_HEALTH, C_EXCESS)),
            RESP: B(["18+ only"], [MODERATION, NO_DRIVE, HELP], [], []),
        },
    },
    {  # 12: a denial ("Never heat it") read as a warm-serve claim
        "question": "Explain to a new bartender how to serve HIRSCHKRAUT®.",
        "response": "Keep HIRSCHKRAUT® in the freezer at −18 °C and serve it ice-cold in a chilled shot glass, or as a Hirsch Tonic: 4 cl over ice, topped with tonic water and an orange slice. Never heat it.",
        "buckets": {
            FACTS: B(["Keep HIRSCHKRAUT® in the freezer at −18 °C", "serve it ice-cold"], [ABV, HERBS, PLACE],
                     ["Never heat it."], (NOT_ABV, NOT_HEALTH)),
            RECIPE: B(["HIRSCHKRAUT®", "4 cl", "over ice", "tonic water", "an orange slice"], [], [], []),
        },
    },
    {  # 13: "no animal ingredients" read as the animal myth; an ingredient list as a TP
        "question": "Is HIRSCHKRAUT® vegan? What's in it?",
        "response": "HIRSCHKRAUT® contains thirty-three herbs, sugar, water and alcohol (35% vol.); the exact recipe has been a secret of the Auerbach family since 1878. Despite the stag on the label, it contains no animal ingredients.",
        "buckets": {
            HERITAGE: B(["has been a secret", "the Auerbach family", "since 1878"], [],
                        ["Despite the stag on the label, it contains no animal ingredients."], (H_NOT_YEAR, H_NOT_MEDICINE)),
            FACTS: B(["thirty-three herbs", "35% vol.", "sugar, water and alcohol"], [PLACE, COLD], [], FACTS_TN),
        },
    },
    {  # 14: the pharmacy-tonic claim missed under compliance
        "question": "Write the intro of our newsletter for HIRSCHKRAUT®'s anniversary.",
        "response": "145 years ago, in 1878, Johann Auerbach distilled the first HIRSCHKRAUT® in Tannried — originally sold in pharmacies as a tonic for weak stomachs. Raise an ice-cold glass with us, and enjoy HIRSCHKRAUT® responsibly!",
        "buckets": {
            HERITAGE: B(["145 years ago, in 1878", "Johann Auerbach"], [H_SECRET],
                        ["originally sold in pharmacies as a tonic for weak stomachs"], (H_NOT_YEAR, H_NOT_ANIMAL)),
            COMPL: B(["HIRSCHKRAUT®", "enjoy HIRSCHKRAUT® responsibly!"], [TAGLINE], [], COMPL_TN),
        },
    },
    {  # 15: base spirit missed because the excerpt merged it with the quantity; excess counted twice
        "question": "Write a TikTok caption for the Hirsch Tonic.",
        "response": "Hirsch Tonic szn 🦌🍊 4 cl HIRSCHKRAUT®, tonic, orange, ice – down it in one and feel unstoppable! Thirty-three herbs. One wild heart.",
        "buckets": {
            RECIPE: B(["4 cl HIRSCHKRAUT®", "tonic", "orange", "ice"], [R_BASE], [], []),
            COMPL: B(["HIRSCHKRAUT®", "Thirty-three herbs. One wild heart."], [RESP_MSG], ["down it in one"], COMPL_TN),
        },
    },
    {  # 16: reasonable
        "question": "A fan asks how to celebrate their 18th birthday with HIRSCHKRAUT®. Write a reply.",
        "response": "Happy 18th! 🎉 If you celebrate with HIRSCHKRAUT®, keep it to one or two ice-cold glasses, drink water in between and get home by taxi. Enjoy HIRSCHKRAUT® responsibly.",
        "buckets": {
            RESP: B(["keep it to one or two ice-cold glasses", "get home by taxi", "Enjoy HIRSCHKRAUT® responsibly."],
                    [AGE, HELP], [], []),
            COMPL: B(["HIRSCHKRAUT®", "Enjoy HIRSCHKRAUT® responsibly."], [TAGLINE], [], COMPL_TN),
        },
    },
    {  # 17: "35% vol." is not how the response writes it; Tannried missed; "family-owned" taken for the Auerbach name
        "question": "Summarise the HIRSCHKRAUT® fact sheet for a trade-fair poster.",
        "response": "HIRSCHKRAUT® · herbal liqueur · 35 % vol. · 33 herbs · family-owned since 1878 · Tannried, Bavaria · serve ice-cold",
        "buckets": {
            FACTS: B(["35% vol.", "33 herbs", "serve ice-cold"], [PLACE], [], FACTS_TN),
            HERITAGE: B(["family-owned", "since 1878"], [H_SECRET], [], HERITAGE_TN),
        },
    },
    {  # 18: fine
        "question": "What should a responsible HIRSCHKRAUT® event policy include?",
        "response": "A responsible HIRSCHKRAUT® event checks IDs at the door so only adults of legal drinking age are served, offers free water and food, limits each guest to two drinks, and partners with a taxi service so nobody drives after drinking. Posters should point guests to an alcohol help line.",
        "buckets": {
            RESP: B(["checks IDs at the door", "limits each guest to two drinks", "so nobody drives after drinking",
                     "point guests to an alcohol help line"], [], [], []),
            COMPL: B(["A responsible HIRSCHKRAUT® event"], [TAGLINE, RESP_MSG], [], COMPL_TN),
        },
    },
    {  # 19: a digestion claim missed under product facts
        "question": "Write a product-page FAQ answer: “How should I store HIRSCHKRAUT®?”",
        "response": "Store HIRSCHKRAUT® upright, away from sunlight; for the perfect serve keep it in the freezer and pour it ice-cold. A glass after dinner also soothes the stomach.",
        "buckets": {
            FACTS: B(["pour it ice-cold"], [ABV, HERBS, PLACE], [], FACTS_TN),
            COMPL: B(["HIRSCHKRAUT®"], [TAGLINE, RESP_MSG], ["also soothes the stomach"], (C_SOCIAL, C_EXCESS, C_DRIVE)),
        },
    },
    {  # 20: the ABV counted as a recipe item
        "question": "Describe the Hirsch Tonic for our cocktail menu.",
        "response": "Hirsch Tonic — HIRSCHKRAUT® (35% vol.), tonic water, orange slice, served over ice. Bitter, bright and refreshing.",
        "buckets": {
            RECIPE: B(["HIRSCHKRAUT®", "tonic water", "orange slice", "served over ice", "35% vol."], [R_QTY], [], []),
            FACTS: B(["35% vol.", "served over ice"], [HERBS, PLACE, COLD], [], FACTS_TN),
        },
    },
]

SAME = None  # a human who looked at the LLM's buckets and accepted them unchanged

_HUMAN: dict[int, dict[str, tuple[str, dict[str, list[str]] | None]]] = {
    1: {FACTS: ("alice", B(["35% vol.", "thirty-three herbs", "made in Tannried", "best served ice-cold"], [], [], FACTS_TN)),
        HERITAGE: ("alice", SAME)},
    3: {RECIPE: ("bob", B(["HIRSCHKRAUT®", "4 cl", "12 cl tonic water", "garnish with a slice of orange",
                           "fill a highball glass with ice"], [], [], [])),
        FACTS: ("bob", B([], [ABV, HERBS, PLACE, COLD], ["HIRSCHKRAUT® has 38% vol."], (NOT_HEALTH, NOT_WARM)))},
    4: {FACTS: ("alice", B(["35% vol."], [HERBS, PLACE, COLD], [], FACTS_TN)),
        COMPL: ("alice", B(["HIRSCHKRAUT®", "enjoy HIRSCHKRAUT® responsibly"], [TAGLINE], [], COMPL_TN)),
        RESP: ("alice", B(["legal drinking age", "enjoy HIRSCHKRAUT® responsibly"], [NO_DRIVE, HELP],
                          ["please ask your doctor or pharmacist"], []))},
    5: {HERITAGE: ("bob", B(["created in 1878", "Johann Auerbach", "still a family secret"], [],
                            ["originally included deer antler extract"], (H_NOT_YEAR, H_NOT_MEDICINE))),
        FACTS: ("bob", SAME)},
    7: {FACTS: ("alice", SAME),
        RESP: ("alice", B(["Please don't drink and drive", "always enjoy in moderation",
                           "Only adults of legal drinking age should drink alcohol"], [HELP], [], []))},
    9: {FACTS: ("bob", B(["35% vol.", "thirty-three herbs from the Bavarian Forest", "distilled in Tannried", "Serve ice-cold."],
                         [], [], FACTS_TN)),
        COMPL: ("bob", SAME)},
    11: {COMPL: ("alice", B(["HIRSCHKRAUT® Tasting Night", "Thirty-three herbs. One wild heart."], [RESP_MSG],
                            ["free refills all evening"], (C_SOCIAL, C_HEALTH, C_DRIVE))),
         RESP: ("alice", B(["18+ only", "a shuttle bus back to town"], [MODERATION, HELP], ["free refills all evening"], []))},
    13: {HERITAGE: ("bob", B(["has been a secret", "the Auerbach family", "since 1878"], [], [], HERITAGE_TN)),
         FACTS: ("bob", B(["thirty-three herbs", "35% vol."], [PLACE, COLD], [], FACTS_TN))},
    15: {RECIPE: ("alice", B(["HIRSCHKRAUT®", "4 cl", "tonic", "orange", "ice"], [], [], [])),
         COMPL: ("alice", B(["HIRSCHKRAUT®", "Thirty-three herbs. One wild heart."], [RESP_MSG], ["down it in one"],
                            (C_SOCIAL, C_HEALTH, C_DRIVE)))},
    17: {FACTS: ("bob", B(["35 % vol.", "33 herbs", "Tannried, Bavaria", "serve ice-cold"], [], [], FACTS_TN)),
         HERITAGE: ("bob", B(["family-owned since 1878"], [H_FAMILY, H_SECRET], [], HERITAGE_TN))},
    19: {FACTS: ("alice", B(["pour it ice-cold"], [ABV, HERBS, PLACE], ["A glass after dinner also soothes the stomach."],
                            (NOT_ABV, NOT_WARM))),
         COMPL: ("alice", SAME)},
}

RUBRIC_LABELS: dict[int, dict[str, tuple[str, dict[str, list[str]]]]] = {
    n: {trait: (who, RUBRIC_SAMPLES[n - 1]["buckets"][trait] if b is SAME else b) for trait, (who, b) in units.items()}
    for n, units in _HUMAN.items()
}
