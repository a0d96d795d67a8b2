"""Why a user asks: the situation a person gives with a request, in the words of the service's domain.

A first turn may say what the user is up to ("I'm reconciling last month's statement") before or after
what it asks for; a later turn may add a short aside ("before I forget"). A situation is drawn for the
service the conversation uses (a built-in server's domain; a service without one gets the general
pool) and for whether the turn only reads or also changes something, so a reason never promises
what the turn does not do: a read is never "I need to pay this today". Situations name no value (no
id, amount or date), so they add nothing a call could be grounded on.
"""

from __future__ import annotations

import random
import re

# (reads, writes) per built-in server: clauses said as "I'm ...", never holding a value
SITUATIONS: dict[str, tuple[list[str], list[str]]] = {
    "banking": (
        [
            "I'm reconciling last month's statement",
            "I want to see where my money stands before payday",
            "something on my card looked off this morning",
            "I'm trying to work out how much I can put aside",
            "my accountant asked me a question I can't answer yet",
            "I'm checking everything before a big purchase",
            "I'm filling in a loan application",
            "I'm looking over my savings plan",
            "I'm looking to understand a few charges",
            "I'm about to go on holiday and want to know where I stand",
            "my partner asked how much we have saved",
            "I'm planning next month's spending",
            "I'm comparing my accounts before I switch banks",
            "a bill is due and I'm not sure it'll clear",
            "I'm doing my taxes this weekend",
            "I think I was charged twice somewhere",
        ],
        [
            "I've got a few money errands to get through",
            "I'd rather sort my accounts out now than forget",
            "rent is coming up and I want things in order",
            "my bank branch is closed today",
            "I'm tidying up my accounts this weekend",
            "I promised my partner I'd handle the banking",
            "my salary just came in",
            "I'm moving some money around before the holidays",
            "I got a letter from the bank I need to act on",
            "I'm helping my mum with her accounts",
            "I'm paying a few people back this week",
            "my card went missing yesterday",
            "I'm setting up money for the kids",
            "payday was this morning",
            "my landlord changed bank details",
            "I'm closing out an old account",
        ],
    ),
    "budget": (
        [
            "I'm doing my monthly money check-in",
            "I'm keen to know where my spending went",
            "I'm trying to stick to my budget this month",
            "my partner and I are planning the next few months",
            "I think I overspent on something",
            "I'm reviewing the household expenses",
            "I plan to work out whether I can afford a trip",
            "I'm comparing this month with last month",
            "the end of the month is close",
            "I'm trying to see where the money leaks",
            "my partner thinks we spend too much on takeaways",
            "I'm planning for a big bill next month",
            "I want to know if we're on track this month",
            "I'm writing up our household numbers",
            "I'm wondering whether to cut back on something",
        ],
        [
            "I'm setting up my budget properly at last",
            "I just got back from the shops with receipts",
            "I'm getting serious about saving this year",
            "I want my budget to match what I actually spend",
            "the numbers in my budget are out of date",
            "I'm changing how I track my spending",
            "I just paid a big bill",
            "I'm starting a savings goal for a holiday",
            "my income changed this month",
            "I'm logging last week's spending",
            "I just got paid and want to plan it out",
            "we're cutting back this month",
            "a bill came in higher than expected",
            "I'm adding up the receipts from the weekend",
            "my budget categories no longer make sense",
        ],
    ),
    "calendar": (
        [
            "my week is filling up fast",
            "I'm trying to find room for a dentist appointment",
            "I'd like to know what's coming up before I plan anything",
            "someone asked whether I'm free",
            "I'm planning around a trip",
            "I'm trying to plan a long weekend",
            "I can't remember when a meeting is",
            "I'm lining up my appointments for the month",
            "I'm checking my availability for a friend",
            "I'm trying to work out a good time for a call",
            "my manager asked what my week looks like",
            "I'm checking if a room is free",
            "I have a doctor's appointment to fit in",
            "I'm planning my time before a deadline",
            "I'm getting ready for tomorrow",
        ],
        [
            "my schedule changed at the last minute",
            "I'm reorganising my week",
            "a colleague asked me to set something up",
            "I keep double-booking myself",
            "the team wants to meet before the deadline",
            "a meeting got moved",
            "I'm planning a family get-together",
            "I'm blocking out time for focused work",
            "my manager asked for a catch-up",
            "a client asked to move our meeting",
            "I'm booking the team offsite",
            "my dentist rang to reschedule",
            "I'm planning a quarterly review",
            "I'm clearing my afternoon",
            "we hired someone who needs onboarding",
        ],
    ),
    "crm": (
        [
            "I've got a sales call in half an hour",
            "I'm preparing the pipeline review",
            "my manager wants an update on our accounts",
            "I'm trying to remember where we left things with a client",
            "I'm prepping for a quarterly business review",
            "a client just emailed me",
            "I'm looking for new leads to follow up",
            "I'm checking on the deals closing this month",
            "I have to find out who our contact is at a company",
            "I'm writing the forecast for the quarter",
            "I'm getting ready for a renewal conversation",
            "a colleague asked who owns an account",
            "I'm checking how busy each rep is",
            "I want to see which deals have stalled",
            "I'm looking into a complaint from a client",
        ],
        [
            "I just got off the phone with a prospect",
            "I'm cleaning up our sales records",
            "a deal moved forward this morning",
            "I'm catching up on notes from this week's meetings",
            "the sales team needs the records current by tonight",
            "a new client signed up",
            "I'm reassigning some of my accounts",
            "I'm logging what happened on today's calls",
            "a prospect went quiet and I'm updating the record",
            "I'm passing a few accounts to a new rep",
            "a lead replied to my email this morning",
            "we just lost a deal",
            "a client asked for a new proposal",
            "I had a great meeting with a prospect",
            "I'm tidying up after a trade show",
        ],
    ),
    "email": (
        [
            "my inbox is a mess this week",
            "I'm looking for something a client sent me",
            "I'm catching up after a few days off",
            "I'm hoping to make sure I didn't miss anything important",
            "I'm going through my mail before a meeting",
            "I'm looking for an old conversation",
            "someone says they wrote to me last week",
            "I'm checking who I still owe an answer",
            "I need to see what came in overnight",
            "I'm waiting on a reply from a supplier",
            "I need an address for a contact",
            "I'm trying to find an attachment from last week",
            "my boss asked whether I saw an email",
            "I'm checking whether a thread is still open",
            "I'm preparing for a call with a client",
        ],
        [
            "I'm trying to get to inbox zero",
            "I owe a few people replies",
            "I need to tidy my mailbox before I leave",
            "I'm sorting out my email between calls",
            "a thread got out of hand and I'm cleaning it up",
            "I'm cleaning out old newsletters",
            "I need to reply before the end of the day",
            "I'm organising my mail into folders",
            "I'm drafting a few messages before a trip",
            "I promised to send something today",
            "I'm heading on holiday tomorrow",
            "a client is waiting on my answer",
            "I'm cleaning up after a long project",
            "I need to loop a colleague in",
            "I'm answering messages on my phone",
        ],
    ),
    "filesystem": (
        [
            "I'm trying to find where I saved some work",
            "I'm checking what's on this machine before a backup",
            "I lost track of my project folders",
            "I'm reviewing files before sending them off",
            "I'm looking for a config file",
            "I want to know how much space things take",
            "I'm checking a file before I edit it",
            "I'm auditing what's in a shared folder",
            "I'm trying to remember what's in a folder",
            "a colleague asked where a file lives",
            "I'm checking what changed in a project",
            "I'm looking for notes I took last week",
            "the disk is filling up",
            "I'm reviewing a draft before a meeting",
        ],
        [
            "I'm reorganising my project folders",
            "I'm cleaning up my workspace",
            "I need my files in order before the handover",
            "I'm setting up a folder structure for a new project",
            "I'm archiving last year's work",
            "I need a copy of a file before I change it",
            "I'm renaming things to our new convention",
            "I'm clearing out temporary files",
            "I'm preparing files for a client",
            "I'm tidying the shared drive",
            "I'm starting a fresh draft",
            "a colleague sent new notes",
            "I'm backing up my work tonight",
            "I'm moving to a new laptop",
        ],
    ),
    "food_delivery": (
        [
            "I'm trying to decide what to have for dinner",
            "I'm hungry and can't make up my mind",
            "friends are coming over tonight",
            "I'm curious what's good around here",
            "my order seems to be taking a while",
            "I'm looking for somewhere that delivers late",
            "I'm looking to try a new place",
            "I'm checking how my last order was rated",
            "I'm on a diet and want lighter options",
            "I'm waiting for my order and getting hungry",
            "I'm looking for something vegetarian",
            "I'm comparing delivery fees tonight",
            "I'm deciding between a couple of places",
            "the kids want pizza again",
            "I want something quick before a meeting",
        ],
        [
            "I'm ordering dinner for the family",
            "I'm sorting out lunch for the office",
            "we're having a movie night",
            "my last order didn't go the way I wanted",
            "I'm too tired to cook tonight",
            "it's my turn to buy lunch",
            "I'm treating the team to lunch",
            "I'm planning a surprise dinner",
            "I forgot to add something to my order",
            "I'm hosting a few friends",
            "my order went to the wrong address last time",
            "it's raining and I'm not going out",
            "I'm ordering for a late night at work",
            "we're celebrating a birthday",
            "I'm trying a new place tonight",
        ],
    ),
    "iot_devices": (
        [
            "I'm away and want to know what's going on at home",
            "the house felt cold when I got in",
            "I'm checking on things before bed",
            "I can't remember whether I left anything on",
            "I'm checking the energy use at home",
            "I think a sensor stopped working",
            "I'm keen to know what my automations do",
            "I'm reviewing the home setup",
            "I'm at work and want to check the house",
            "a light keeps turning on by itself",
            "the battery warnings keep coming",
            "I'm wondering why it's so warm upstairs",
            "the camera app looks odd today",
            "I'm checking the house before a trip",
        ],
        [
            "I'm heading out for the weekend",
            "guests are arriving soon",
            "I'm setting the house up for the evening",
            "my smart home setup needs some tidying",
            "the heating bill was too high last month",
            "I'm going to bed",
            "the kids are home alone for an hour",
            "I'm reorganising the rooms in the app",
            "I'm trying to save on electricity",
            "we have a new baby in the house",
            "I'm setting up a new room",
            "I'm leaving for two weeks",
            "a storm is coming tonight",
            "I'm hosting a party",
            "I'm getting the house ready for winter",
        ],
    ),
    "issue_tracker": (
        [
            "I'm preparing for sprint planning",
            "standup is in ten minutes",
            "I'm triaging before the release",
            "I plan to find out what's blocking the team",
            "I'm writing the weekly status report",
            "a customer reported a bug",
            "I'm checking what's left in the sprint",
            "I'd like to see who's working on what",
            "a stakeholder asked about a feature",
            "I'm preparing the release notes",
            "my lead asked how the sprint is going",
            "I'm looking for bugs nobody owns",
            "I'm checking what a teammate worked on",
            "a release date is coming up",
            "I'm reviewing what's still open",
        ],
        [
            "we just finished sprint planning",
            "I'm grooming the backlog",
            "QA reported a few things this morning",
            "I'm getting the board in shape before the release",
            "I'm handing some work over to a teammate",
            "I'm reassigning work while someone is on leave",
            "a bug turned out to be worse than we thought",
            "we're splitting up a big task",
            "I'm closing out the sprint",
            "a customer escalation came in",
            "the release got pushed back",
            "I'm fixing up the sprint board",
            "we found a bug in production",
            "a teammate just joined the project",
            "I'm cleaning up after the retro",
        ],
    ),
    "maps": (
        [
            "I'm planning a day out",
            "I'm new to this part of town",
            "I'm trying to work out how long the trip will take",
            "I'm meeting someone and need to know the way",
            "I'm deciding where to stay",
            "I've got to find somewhere to eat nearby",
            "I'm checking distances for a delivery",
            "friends are visiting and I'm playing tour guide",
            "I'm deciding where to have lunch",
            "I need to know whether a place is open",
            "I'm working out the fastest way across town",
            "a friend recommended a few spots",
            "I'm checking reviews before I go",
            "I'm comparing a couple of routes",
        ],
        [
            "I'm getting my saved places in order",
            "I'm planning a road trip",
            "I want my usual spots saved for next time",
            "I'm setting up a route for tomorrow",
            "I'm saving places for an upcoming trip",
            "I'm cleaning up my saved places",
            "I'm helping a friend find their way",
            "I'm putting together a walking tour",
            "I found a great café today",
            "I'm organising a trip with friends",
            "a place I saved has closed",
            "I'm planning a cycling route",
            "I'm moving to a new neighbourhood",
            "I'm sorting my places into lists",
        ],
    ),
    "marketplace": (
        [
            "I'm hunting for a bargain",
            "I'm keeping an eye on a few auctions",
            "I'm thinking of selling some old things",
            "I'm hoping to compare what's on offer before I bid",
            "I'm checking the going price for something",
            "I need to see how my listings are doing",
            "I'm watching a seller I like",
            "I'm looking for something specific",
            "I'm trying to price something I want to sell",
            "I'm watching how the bidding goes",
            "I want to know who's selling in my area",
            "I'm checking a seller before I bid",
            "I'm curious how my auction is doing",
            "I'm looking for a good deal on furniture",
        ],
        [
            "I'm clearing out the garage",
            "an auction I care about ends soon",
            "I'm managing my listings before the weekend",
            "I've decided what I want to buy",
            "I'm putting a few things up for sale",
            "I changed my mind about a bid",
            "I'm moving house and selling furniture",
            "I want to win an auction tonight",
            "I'm decluttering before a move",
            "someone made me a good offer",
            "I'm updating a listing that isn't selling",
            "I've got some old gear to sell",
            "I'm done with an auction",
            "I'm ready to place a bid",
        ],
    ),
    "payments": (
        [
            "I'm closing the books for the month",
            "a customer says they already paid",
            "I'm checking on our cash flow",
            "finance asked me about an invoice",
            "a payment looks like it failed",
            "I'm reviewing our subscriptions",
            "I'm matching payments to invoices",
            "our accountant needs numbers",
            "a client disputes a charge",
            "I'm looking into a failed payment",
            "I'm preparing the numbers for our accountant",
            "I want to see which invoices are overdue",
            "I'm checking what we refunded this month",
            "finance wants to know what's outstanding",
        ],
        [
            "I'm doing the invoicing for the month",
            "a customer's order changed",
            "I'm setting up our billing properly",
            "I need to get paid before the month ends",
            "a customer asked for a refund",
            "I'm setting up a new customer",
            "we changed our pricing",
            "I'm chasing a late payment",
            "a customer paid by mistake",
            "I'm sending out this month's invoices",
            "a client asked for a discount",
            "I'm fixing a billing mistake",
            "we signed a new client",
            "I'm cleaning up old invoices",
        ],
    ),
    "retail_chain": (
        [
            "I'm checking stock before the weekend rush",
            "I run one of the branches",
            "I'm planning the next delivery",
            "a customer asked whether we have something in",
            "I'm comparing stores' numbers",
            "the regional manager wants an update",
            "I'm checking opening hours before a holiday",
            "I'm looking into a stock problem",
            "a customer is waiting at the counter",
            "I'm checking which store has stock",
            "I'm comparing branches for the weekly report",
            "I'm planning staff around opening hours",
            "I'm checking on a reservation",
            "head office asked about a product",
        ],
        [
            "a shipment just came in",
            "I'm moving stock between our stores",
            "I'm getting the shelves ready for a promotion",
            "I need the stock records right before the count",
            "we're running low on a best seller",
            "I'm preparing for the holiday rush",
            "I'm correcting a stock mistake",
            "a store is being refitted",
            "a customer wants to pick up an item",
            "a delivery came in short",
            "one branch ran out of a product",
            "I'm balancing stock between stores",
            "a reservation needs changing",
            "I'm getting ready for a sale",
        ],
    ),
    "shopping": (
        [
            "I'm looking for a gift",
            "I'm comparing a few things before I buy",
            "I'm waiting on a delivery",
            "I'm looking to see what I've got saved",
            "I'm checking the price of something I like",
            "I'm keen to see what's in my basket",
            "I'm looking for something for the kitchen",
            "I'm tracking what I ordered",
            "I'm deciding between two products",
            "I'm checking whether my order shipped",
            "I'm looking for something under budget",
            "I'm reading reviews before I buy",
            "I'm curious what my last order cost",
            "a friend recommended a product",
        ],
        [
            "I'm finally doing that shopping I put off",
            "I changed my mind about something I ordered",
            "I plan to get my order in before the sale ends",
            "I'm getting things together for a birthday",
            "I'm stocking up for the month",
            "a gift arrived damaged",
            "I'm using a discount before it expires",
            "I need something delivered this week",
            "I'm buying a present for my sister",
            "I'm replacing something that broke",
            "I found a better deal",
            "I'm ordering supplies for the office",
            "I'm moving and need a few things",
            "I'm returning something that didn't fit",
        ],
    ),
    "social_media": (
        [
            "I'm catching up on what people have been posting",
            "I'd like to see how my last post did",
            "I'm checking out someone a friend mentioned",
            "I've been offline for a few days",
            "I'm checking what's trending",
            "I'm looking for someone I met at a conference",
            "I've got to read the replies to my post",
            "I'm curious who follows me",
            "I'm looking up an old classmate",
            "I want to see what my friends posted",
            "I'm checking the comments on a post",
            "I'm curious who's new around here",
            "I'm looking for posts about a local event",
            "I'm checking a post before I share it",
        ],
        [
            "I'm hoping to share something with my followers",
            "I'm tidying up my profile",
            "I'm joining in on a conversation",
            "I'm cleaning up my feed",
            "I'm promoting an event",
            "I'm responding to comments on my post",
            "I'm unfollowing accounts I don't read",
            "I'm trying to be more active online",
            "I'm back from a trip and want to post",
            "I'm reconnecting with old friends",
            "I'm cleaning up who I follow",
            "I'm thanking people for their comments",
            "I'm sharing some news",
            "I'm taking a break from some accounts",
        ],
    ),
    "team_chat": (
        [
            "I'm catching up on the team chat after a meeting",
            "I need to find a message someone sent me",
            "I'm looking for who's in which channel",
            "I missed a discussion this morning",
            "I'm getting up to speed on a project",
            "I'm looking for a link someone shared",
            "I want to know who's online",
            "I'm checking a channel before a meeting",
            "I'm looking for a decision we made last week",
            "I'm checking who's in a channel",
            "I'm catching up after a day off",
            "I'm finding who to ask about a project",
            "I'm checking a thread before replying",
            "a colleague mentioned a discussion",
        ],
        [
            "I need to let the team know something",
            "I'm setting up a space for a new project",
            "I'm keeping the channels organised",
            "a conversation needs my input",
            "I'm welcoming a new teammate",
            "I need to answer a question from a colleague",
            "I'm announcing a change to the team",
            "I'm archiving an old project's chat",
            "I'm starting a new project channel",
            "I have an update for the team",
            "a teammate is leaving the project",
            "I'm answering a question in a thread",
            "I'm tidying up old channels",
            "I'm organising a team event",
        ],
    ),
    "trading": (
        [
            "I'm reviewing my investments",
            "the market moved a lot today",
            "I'm deciding whether to rebalance",
            "I'm looking to see how my holdings are doing",
            "I'm checking my portfolio before a meeting with my adviser",
            "I'm thinking about buying more of something",
            "I'm keen to see my recent orders",
            "I'm looking at my returns this year",
            "I'm checking how a stock did this week",
            "I'm preparing for a chat with my adviser",
            "I'm comparing my portfolios",
            "I want to see if an order went through",
            "I'm deciding whether to sell",
            "I'm watching the market this morning",
        ],
        [
            "I've made up my mind about a trade",
            "I'm rebalancing my portfolio",
            "I'm moving some money around my investments",
            "I plan to act before the market closes",
            "I'm taking some profit",
            "I'm putting money into the market this month",
            "I changed my mind about an order",
            "I'm selling to cover a big expense",
            "I got a bonus to invest",
            "I'm trimming a position",
            "I'm moving into something safer",
            "I want to buy before the weekend",
            "I'm cancelling an order I regret",
            "I'm adding to a position I like",
        ],
    ),
    "travel_booking": (
        [
            "I'm planning a trip next month",
            "I'm comparing options for a work trip",
            "I'd like to check my travel plans",
            "my travel dates might change",
            "I'm looking for a cheaper flight",
            "I'm checking my loyalty points",
            "I have to weigh up my hotel options",
            "I'm planning a weekend away",
            "I'm checking flight times for a trip",
            "I'm comparing hotels in the city",
            "I'm looking at my bookings for next month",
            "a colleague asked about my travel plans",
            "I'm checking my points before I book",
            "I'm wondering if a room is still available",
        ],
        [
            "I'm booking a trip for the family",
            "my plans changed",
            "I'm finalising my itinerary",
            "I'm sorting out a business trip",
            "I'm booking a holiday",
            "a meeting abroad was confirmed",
            "my flight was moved",
            "I'm adding a traveller to a trip",
            "I'm booking a conference trip",
            "my meeting moved to another day",
            "I'm adding a hotel night",
            "I'm taking my parents on holiday",
            "a trip got cancelled",
            "I'm booking a last-minute getaway",
        ],
    ),
    "vehicle": (
        [
            "I'm about to head out on a long drive",
            "the car is making a strange noise",
            "I'm checking the car before a trip",
            "a warning light came on",
            "I'm checking the car's range",
            "I can't remember if I locked the car",
            "the tyres looked a bit low",
            "I'm planning a charging stop",
            "I'm checking the car before a long drive",
            "the fuel gauge looks low",
            "I want to know where I parked",
            "I'm checking the car's state from the office",
            "the car felt odd on the motorway",
            "I'm planning a trip with the car",
        ],
        [
            "I'm getting ready to drive",
            "I'm parked and about to leave",
            "I'm picking the kids up soon",
            "I'm getting the car ready for a road trip",
            "I'm about to run some errands",
            "I'm about to leave the office",
            "I'm parking for the night",
            "I'm letting a friend borrow the car",
            "it's cold and I want the car warm",
            "I'm heading to the airport",
            "a friend needs the car tonight",
            "I'm leaving the car at the station",
            "I'm going on a road trip tomorrow",
            "I'm charging the car overnight",
        ],
    ),
    "video_meeting": (
        [
            "I'm catching up on meetings I missed",
            "I'm hoping to find out who's joining my call",
            "I'm preparing for tomorrow's meetings",
            "I'm looking for a recording a colleague mentioned",
            "I'm checking who attended a meeting",
            "I want the recording of yesterday's call",
            "I'm reviewing my upcoming calls",
            "I'm looking for a meeting link",
            "I'm checking who joined yesterday's call",
            "I'm looking for a call I missed",
            "I'm preparing for a client call",
            "I'm checking how long a recording is",
            "I'm seeing what's on my calendar",
            "a colleague asked for the meeting link",
        ],
        [
            "I'm setting up calls for next week",
            "the meeting plans changed",
            "I'm organising a workshop",
            "a client wants to talk",
            "I'm setting up a webinar",
            "a client rescheduled",
            "I'm inviting a few more people",
            "I'm cleaning up old meetings",
            "I'm setting up a team call",
            "a client asked for a demo",
            "I'm inviting a guest speaker",
            "the meeting time changed",
            "I'm cleaning up my recordings",
            "I'm running a training session",
        ],
    ),
}
GENERAL = (
    [
        "I need to check something",
        "I'm trying to get a clear picture",
        "I'd like to see where things stand",
        "I'm looking into something",
    ],
    [
        "I've got a few things to sort out",
        "I'd like to get this done now",
        "something needs changing",
        "I'm tidying things up",
    ],
)
# how a situation goes with the request: before it as a sentence, before it with "so", after it with "since"
LEADS = ["{R}. {t}", "{R}, so {t}", "{R}. {t}", "{R}; {t}"]
TRAILS = ["{t}, since {r}{end}", "{t}, because {r}{end}", "{t}, as {r}{end}"]
# asides a later turn may carry: true whatever it asks
ASIDES = [
    "before I forget",
    "while I think of it",
    "while we're on it",
    "since we're here",
    "if you don't mind",
    "when you get a chance",
    "just so I have it",
    "while you're in there",
]
KEEP_CASE = {"i", "i'd", "i'm", "i've", "i'll"}


def situation(server: str, writes: bool, rng: random.Random, told: set[str] | None = None) -> str:
    """A situation of a user of ``server`` (a reading or a writing one), none of ``told`` (those a conversation gave
    already, to which it is added) while there is another."""
    reads, acts = SITUATIONS.get(server, GENERAL)
    pool = acts if writes else reads
    said = rng.choice([s for s in pool if s not in (told or ())] or pool)
    if told is not None:
        told.add(said)
    return said


def lower_first(text: str) -> str:
    """``Could you ...`` -> ``could you ...``; a word that keeps its capital (I, a name, an id) stays."""
    first = text.split(" ", 1)[0]
    if first.lower().strip(",.:;!?") in KEEP_CASE or not first[1:].islower() or not first[:1].isupper():
        return text
    return text[:1].lower() + text[1:]


def with_situation(text: str, why: str, rng: random.Random) -> str:
    """``text`` (a request ending with ``.`` or ``?``) with the situation ``why`` said before or after it."""
    end = text[-1:] if text[-1:] in ".?!" else "."
    body = text[:-1] if text[-1:] in ".?!" else text
    if rng.random() < 0.3 and ":" not in body and ";" not in body:
        return rng.choice(TRAILS).format(t=body, r=why, end=end)
    so = re.match(r"so\b", text, re.IGNORECASE) is not None  # "So next, ...": never "..., so so next"
    # never "...; quick favour: ..."
    form = rng.choice([f for f in LEADS if not (so and ", so" in f)]) if ":" not in text else LEADS[0]
    t = lower_first(text) if "so" in form or ";" in form else text
    return form.format(R=why[:1].upper() + why[1:], t=t)


def with_aside(text: str, rng: random.Random) -> str:
    """A later turn with a short aside after its request ("..., before I forget.")."""
    end = text[-1:] if text[-1:] in ".?!" else "."
    body = text[:-1] if text[-1:] in ".?!" else text
    return f"{body}, {rng.choice(ASIDES)}{end}"


# a service's nouns as its users say them, in about half the turns: (singular, plural) -> the ways people say them
# ((singular, plural) each); a conversation picks one way per noun and keeps it (:func:`noun_choice`)
NOUNS: dict[str, dict[tuple[str, str], list[tuple[str, str]]]] = {
    "vehicle": {("vehicle", "vehicles"): [("car", "cars")]},
    "email": {("message", "messages"): [("email", "emails")]},
    "issue_tracker": {("issue", "issues"): [("ticket", "tickets")]},
    "crm": {
        ("deal", "deals"): [("opportunity", "opportunities")],
        ("lead", "leads"): [("prospect", "prospects")],
        ("company", "companies"): [("account", "accounts"), ("client", "clients")],
    },
    "iot_devices": {
        ("automation", "automations"): [("routine", "routines"), ("rule", "rules")],
        ("home", "homes"): [("house", "houses")],
    },
    "maps": {("place", "places"): [("spot", "spots"), ("location", "locations")]},
    "shopping": {
        ("cart", "carts"): [("basket", "baskets"), ("bag", "bags")],
        ("product", "products"): [("item", "items")],
        ("coupon", "coupons"): [("voucher", "vouchers"), ("promo code", "promo codes")],
    },
    "payments": {
        ("invoice", "invoices"): [("bill", "bills")],
        ("webhook", "webhooks"): [("endpoint", "endpoints"), ("hook", "hooks")],
    },
    "travel_booking": {
        ("traveller", "travellers"): [("traveler", "travelers"), ("passenger", "passengers")],
        ("itinerary", "itineraries"): [("trip", "trips")],
        ("booking", "bookings"): [("reservation", "reservations")],
    },
    "retail_chain": {
        ("store", "stores"): [("shop", "shops"), ("branch", "branches")],
        ("transfer", "transfers"): [("shipment", "shipments")],
    },
    "video_meeting": {("meeting", "meetings"): [("call", "calls")]},
    "food_delivery": {
        ("restaurant", "restaurants"): [("place", "places"), ("spot", "spots")],
        ("item", "items"): [("dish", "dishes")],
    },
    "marketplace": {("listing", "listings"): [("ad", "ads")], ("bid", "bids"): [("offer", "offers")]},
    "trading": {("position", "positions"): [("holding", "holdings")]},  # never "order": "the order book"
    "filesystem": {("directory", "directories"): [("folder", "folders")]},
    "budget": {("expense", "expenses"): [("purchase", "purchases")]},
    "calendar": {("event", "events"): [("appointment", "appointments")]},
}
# nouns of NOUNS that are verbs too ("transfer the stock", "place a bid"): swapped only after a determiner, an id or a
# possessive ("the transfer", "TRF-0001 transfer", "the store's transfers")
VERBS_TOO = {"transfer", "transfers", "place", "places"}
DETERMINED = re.compile(
    r"(?:\b(?:the|a|an|that|this|these|those|my|your|our|their|its|each|every|any|all|which|new|same|"
    r"first|last|other|pending)|'s|s'|\b[A-Z]+-\d+)\s*$"
)
UNQUOTED = re.compile(r'"[^"]*"|\([^)]*\)|[A-Za-z]+')


def noun_choice(server: str, rng: random.Random) -> dict[str, str]:
    """One way to say each of a service's nouns, for a whole conversation (a user who says "branch" keeps saying
    it): word -> the word said, singular and plural."""
    out: dict[str, str] = {}
    for (one, many), ways in NOUNS.get(server, {}).items():
        said_one, said_many = rng.choice(ways)
        out |= {one: said_one, many: said_many}
    return out


def reword(text: str, server: str, keep: set[str], rng: random.Random, nouns: dict[str, str] | None = None) -> str:
    """``text`` with the service's nouns said as its users say them ("the car VEH-003"), in about half the turns;
    quoted text, names in brackets and the words of ``keep`` (values the request names) left as they are. ``nouns``:
    the conversation's choice (:func:`noun_choice`), else one drawn here."""
    nouns = nouns if nouns is not None else noun_choice(server, rng)
    if not nouns or rng.random() < 0.5:
        return text

    def swap(m: re.Match[str]) -> str:
        w = m.group(0)
        if w in keep or (w in VERBS_TOO and not _after_determiner(text[: m.start()])):
            return w  # "transfer the stock" stays a verb: never "shipment the stock"
        return nouns.get(w, w)

    said = UNQUOTED.sub(swap, text)
    # "an order" said "a trade", "a meeting" said "an appointment"
    return re.sub(r"\b(a|an) ([a-z]+)", lambda m: _article(m) if m.group(2) in nouns.values() else m.group(0), said)


def _article(m: re.Match[str]) -> str:
    word = m.group(2)
    return ("an " if word[0] in "aeiou" else "a ") + word


def _after_determiner(before: str) -> bool:
    """Does a word after ``before`` stand as a noun ("the ", "my ", "STR-0001's ")?"""
    return DETERMINED.search(before) is not None
