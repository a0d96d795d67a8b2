"""Shared word lists for deterministic, realistic seeded worlds."""

FIRST_NAMES = [
    "Ava", "Liam", "Maya", "Noah", "Zoe", "Ethan", "Iris", "Lucas", "Nora", "Omar", "Priya", "Hugo",
    "Lena", "Mateo", "Sofia", "Kenji", "Amara", "Felix", "Chloe", "Diego", "Hana", "Ravi", "Elena", "Tomas",
    "Grace", "Yusuf", "Mila", "Oscar", "Leah", "Jonas", "Aisha", "Victor", "Clara", "Samir", "Ingrid", "Pablo",
]
LAST_NAMES = [
    "Garcia", "Okafor", "Chen", "Novak", "Silva", "Muller", "Haddad", "Kowalski", "Tanaka", "Rossi",
    "Andersen", "Dubois", "Patel", "Moreau", "Nguyen", "Schmidt", "Costa", "Brennan", "Ibrahim", "Larsen",
    "Fischer", "Romero", "Walsh", "Sato", "Becker", "Lindqvist", "Mendes", "Okoye", "Varga", "Hughes",
]
CITIES = ["Lisbon", "Denver", "Austin", "Leeds", "Lyon", "Porto", "Boston", "Dublin", "Seattle", "Madrid", "Oslo", "Toronto"]
