"""Paraphrase set for the spatial evaluation: how people and planners actually ask spatial questions.

Written before the parser and before reading ``templates.py``: phrasings come from the RynnEC paper's
appendix templates (Listing 1: camera distance, closer/closest, future direction, rotate to face,
height from ground, centre distance, tallest, above) and from everyday operator phrasing. Each entry is
``(expected, question)``: ``expected`` is the structured task string the question means (the same syntax
as ``AskQuestion.task``, see ``parse.py``), listing only slots that differ from their defaults, plus
``objects=`` (region indices, subject first) when the subject is not the first object named; without
it the objects are taken in the order the question names them. ``<objectK>`` is region K.

Sets. The **development set** (``split("dev")``, 3282 entries) is this file (250) followed by
``paraphrases_blind.py`` (233), ``paraphrases_blind2.py`` (239) and ``paraphrases_blind3.py`` …
``paraphrases_blind11.py`` and ``paraphrases_blind13.py`` (256 each).
This file was first split by position into a development half (even positions, tuned on) and a
held-out half (odd positions); once the held-out half had been reported (docs/spatial.md) its one
unrecognised phrasing was fixed, which made it development data too.
``paraphrases_blind.py`` was then written blind and measured once as the held-out set (200 of 233
parsed right); after that report the parser was generalised against its misses, so it is development
data now. ``paraphrases_blind2.py`` was written blind the same way and measured once as the held-out
set (231 of 239 parsed right); the parser was then generalised on its miss patterns, so it is
development data too; so are ``paraphrases_blind3.py`` … ``paraphrases_blind11.py`` (each written
blind after that, committed before the parser was run on it, measured once as the held-out set, 243,
251, 248, 249, 251, 250, 245, 245 and 255 of 256 parsed right, then generalised on), and so is
``paraphrases_blind13.py``, written after the twelfth as a second probe (255 of 256). The **held-out set**
(``split("heldout")``) is ``paraphrases_blind12.py`` (256): the same format, written blind by another
engineer, committed unread before the parser was run on it, and never used to change the parser.
"""

from __future__ import annotations

import importlib

FAMILIES: dict[str, list[tuple[str, str]]] = {
    "distance_to_camera": [
        ("distance_to_camera", "How far is <object0> from you?"),
        ("distance_to_camera", "What is the distance between you and <object0>?"),
        ("distance_to_camera", "How far away is <object0>?"),
        ("distance_to_camera", "How many meters am I from <object0>?"),
        ("distance_to_camera", "What's the distance from me to <object0>?"),
        ("distance_to_camera unit=cm", "How many centimeters away from me is <object0>?"),
        ("distance_to_camera", "Roughly how far do I have to go to get to <object0>?"),
        ("distance_to_camera", "Tell me the distance to <object0>."),
        ("distance_to_camera", "How distant is <object0> from the camera?"),
        ("distance_to_camera", "What is your distance to <object0> right now?"),
        ("distance_to_camera unit=ft", "How many feet is <object0> from me?"),
        ("distance_to_camera", "Estimate how far <object0> is from where you are standing."),
        ("distance_to_camera", "<object0> is how far from you?"),
        ("distance_to_camera", "How far off is <object0>?"),
        ("distance_to_camera", "Give me the range to <object0> in meters."),
        ("distance_to_camera", "What is the gap between me and <object0>?"),
    ],
    "closer_closest": [
        ("closer_to_camera", "Which is closer to you, <object0> or <object1>?"),
        ("closer_to_camera", "Between <object0> and <object1>, which one is nearer to you?"),
        ("closer_to_camera", "Which one is closer to you, <object0> or <object1>?"),
        ("closest_to_camera", "Which is closest to you, <object0> or <object1> or <object2>?"),
        ("closest_to_camera", "Among <object0>, <object1>, and <object2>, which one is nearer to you?"),
        ("closest_to_camera", "Which of <object0>, <object1>, or <object2> is closest to you?"),
        (
            "closest_to_camera",
            "Which of the three objects, <object0>, <object1>, or <object2>, is closest to you?",
        ),
        ("closer_to_camera order=far", "Which is farther from me, <object0> or <object1>?"),
        ("closest_to_camera order=far", "Of <object0>, <object1> and <object2>, which is the farthest away?"),
        ("closer_to_camera form=yesno", "Is <object0> closer to me than <object1>?"),
        ("closer_to_camera order=far form=yesno", "Is <object0> farther away from you than <object1>?"),
        ("closer_to_camera", "Which one should I reach first, <object0> or <object1>, going by distance?"),
        ("closer_to_camera order=far", "Which of these two is further from you: <object0> or <object1>?"),
        ("closest_to_camera", "Out of <object0>, <object1> and <object2>, which is nearest to me?"),
        ("closer_to_camera form=yesno", "Is <object0> nearer to you than <object1> is?"),
        ("closer_to_camera", "<object0> or <object1>: which one is the closer one to me?"),
        (
            "closest_to_camera order=far",
            "Which among <object0>, <object1>, <object2> is most distant from you?",
        ),
        ("closer_to_camera order=far form=yesno", "Is <object0> further from me than <object1>?"),
    ],
    "center_distance": [
        ("center_distance", "What is the distance between the centers of <object0> and <object1>?"),
        ("center_distance", "How far apart are the centers of <object0> and <object1>?"),
        ("center_distance", "What is the separation between the central points of <object0> and <object1>?"),
        ("center_distance", "How far is <object0> from <object1>?"),
        ("center_distance", "What's the distance between <object0> and <object1>?"),
        ("center_distance unit=cm", "How many centimeters separate <object0> and <object1>?"),
        ("center_distance", "How far apart are <object0> and <object1>?"),
        ("center_distance", "Measure the distance from <object0> to <object1>."),
        ("center_distance", "What is the gap between <object0> and <object1> in meters?"),
        ("center_distance", "How much space is there between <object0> and <object1>?"),
        ("center_distance", "Tell me how far <object0> is from <object1>."),
        ("center_distance", "Distance from the middle of <object0> to the middle of <object1>?"),
        ("center_distance unit=ft", "How many feet apart are <object0> and <object1>?"),
        ("center_distance", "How distant is <object0> from <object1>?"),
        ("center_distance", "Between <object0> and <object1>, what is the center-to-center distance?"),
        ("center_distance", "Could you tell me the distance separating <object0> from <object1>?"),
    ],
    "height_from_ground": [
        ("height_from_ground", "How high is <object0> above the ground?"),
        ("height_from_ground point=top", "How high is the top of <object0> above the floor?"),
        ("height_from_ground point=bottom", "How high is the bottom of <object0> above the floor?"),
        ("height_from_ground", "What is the height of the center of <object0> above the floor?"),
        ("height_from_ground point=top", "How far above the floor is the top surface of <object0>?"),
        ("height_from_ground", "At what height above the ground is <object0>?"),
        ("height_from_ground point=bottom", "How far off the floor is the underside of <object0>?"),
        (
            "height_from_ground point=top",
            "What is the height of the highest point of <object0> from the ground?",
        ),
        ("height_from_ground", "How far above the floor is the middle of <object0>?"),
        (
            "height_from_ground point=bottom",
            "What is the clearance under <object0>, from the floor to its lowest point?",
        ),
        (
            "height_from_ground point=top unit=cm",
            "How many centimeters above the floor is the top of <object0>?",
        ),
        ("height_from_ground", "What is the elevation of <object0> above floor level?"),
        ("height_from_ground point=top", "How high up from the ground does <object0> reach at its top?"),
        ("height_from_ground point=bottom", "At what height is the base of <object0> above the floor?"),
        ("height_from_ground", "How high off the ground is the centre of <object0>?"),
        ("height_from_ground point=top", "From the floor, how high is the upper edge of <object0>?"),
        ("height_from_ground point=bottom", "How high is the lower edge of <object0> above the ground?"),
        ("height_from_ground", "How far is <object0> above the floor?"),
    ],
    "height_difference": [
        (
            "height_difference",
            "What is the height difference above ground level between <object0> and <object1>?",
        ),
        (
            "height_difference",
            "How much higher or lower is <object0> compared to <object1> above the ground?",
        ),
        (
            "height_difference",
            "By what amount does the elevation of <object0> differ from that of <object1>?",
        ),
        ("height_difference point=top", "How much higher is the top of <object0> than the top of <object1>?"),
        (
            "height_difference point=bottom",
            "What is the difference in height between the bottoms of <object0> and <object1>?",
        ),
        ("height_difference", "How much higher is <object0> than <object1>?"),
        (
            "height_difference point=top",
            "What is the height difference between the tops of <object0> and <object1>?",
        ),
        ("height_difference", "By how much do the centers of <object0> and <object1> differ in height?"),
        (
            "height_difference point=bottom",
            "How much lower is the bottom of <object0> than the bottom of <object1>?",
        ),
        ("height_difference", "What is the vertical offset between <object0> and <object1>?"),
        (
            "height_difference point=top unit=cm",
            "In centimeters, how much taller does the top of <object0> stand than the top of <object1>?",
        ),
        ("height_difference", "How far apart in height are <object0> and <object1>?"),
        (
            "height_difference point=top",
            "Compare the top edges of <object0> and <object1>: what is the height gap?",
        ),
        ("height_difference", "How much lower is <object0> than <object1>?"),
        (
            "height_difference point=bottom",
            "How big is the height difference between the undersides of <object0> and <object1>?",
        ),
        ("height_difference", "What is the difference in elevation between <object0> and <object1>?"),
    ],
    "object_size": [
        ("object_height", "How tall is <object0>?"),
        ("object_height", "What is the height of <object0>?"),
        ("object_length", "How long is <object0>?"),
        ("object_width", "How wide is <object0>?"),
        ("object_length", "What is the length of <object0>?"),
        ("object_width", "What is the width of <object0>?"),
        ("object_height unit=cm", "How many centimeters tall is <object0>?"),
        ("object_height", "What is the vertical size of <object0>?"),
        ("object_length", "How long is the longest side of <object0>?"),
        ("object_width", "How wide is <object0> across its narrow side?"),
        ("object_height", "Tell me the height of <object0>, from its base to its top."),
        ("object_length unit=ft", "How many feet long is <object0>?"),
        ("object_width unit=cm", "What is the width of <object0> in centimeters?"),
        ("object_height", "Measure how tall <object0> is."),
        ("object_length", "What is the length of <object0> in meters?"),
        ("object_width", "Roughly how wide is <object0>?"),
        ("object_height", "How high is <object0> itself, from bottom to top?"),
        ("object_length", "Estimate the length of <object0>."),
    ],
    "size_choice": [
        (
            "tallest_choice",
            "Among the three objects <object0>, <object1>, and <object2>, which one is the tallest?",
        ),
        ("tallest_choice", "Which of the three objects <object0>, <object1>, and <object2> is tallest?"),
        (
            "tallest_choice",
            "Out of the three objects <object0>, <object1>, and <object2>, which one is the tallest?",
        ),
        ("tallest_choice", "Which is taller, <object0> or <object1>?"),
        ("tallest_choice order=min", "Which is shorter, <object0> or <object1>?"),
        ("tallest_choice dim=length", "Which one is longer, <object0> or <object1>?"),
        ("tallest_choice dim=width", "Which is wider, <object0> or <object1>?"),
        ("tallest_choice order=min", "Of <object0>, <object1> and <object2>, which one is the shortest?"),
        ("tallest_choice form=yesno", "Is <object0> taller than <object1>?"),
        ("tallest_choice dim=length form=yesno", "Is <object0> longer than <object1>?"),
        ("tallest_choice dim=width order=min", "Which one is narrower, <object0> or <object1>?"),
        ("tallest_choice dim=length order=min", "Which is shorter in length, <object0> or <object1>?"),
        ("tallest_choice order=min form=yesno", "Is <object0> shorter than <object1>?"),
        ("tallest_choice dim=length", "Among <object0>, <object1> and <object2>, which is the longest?"),
        ("tallest_choice", "Between <object0> and <object1>, which stands taller?"),
        ("tallest_choice dim=width", "Which of <object0>, <object1>, <object2> is the widest?"),
        ("tallest_choice dim=width form=yesno", "Is <object0> wider than <object1>?"),
        ("tallest_choice", "<object0> or <object1>, which one has the greater height?"),
    ],
    "above_below": [
        ("above_predicate", "Is <object0> above <object1>?"),
        ("above_predicate", "Does <object0> appear over <object1>?"),
        ("above_predicate", "Can you confirm if <object0> is positioned above <object1>?"),
        ("below_predicate", "Is <object0> below <object1>?"),
        ("below_predicate", "Is <object0> underneath <object1>?"),
        ("above_predicate", "Is <object0> on top of <object1>?"),
        ("below_predicate", "Does <object0> sit beneath <object1>?"),
        ("above_choice", "Which one is above the other, <object0> or <object1>?"),
        ("above_choice relation=below", "Which is below, <object0> or <object1>?"),
        ("above_predicate", "Is <object0> resting on <object1>?"),
        ("below_predicate", "Is <object0> under <object1>?"),
        ("above_choice", "Of <object0> and <object1>, which one is on top?"),
        ("above_predicate", "Is <object0> located over <object1>?"),
        ("above_choice relation=below", "Which one is underneath, <object0> or <object1>?"),
        ("below_predicate", "Can you check whether <object0> is positioned below <object1>?"),
        ("above_choice", "Between <object0> and <object1>, which is the one above?"),
        ("above_predicate", "Is <object0> sitting on top of <object1>?"),
        (
            "above_choice relation=below",
            "Which of <object0> and <object1> is lower down, underneath the other?",
        ),
    ],
    "higher_lower": [
        ("higher_choice", "Which one is higher, <object0> or <object1>?"),
        ("higher_choice order=min", "Which one is lower, <object0> or <object1>?"),
        ("higher_choice form=yesno", "Is <object0> higher than <object1>?"),
        ("higher_choice order=min form=yesno", "Is <object0> lower than <object1>?"),
        ("higher_choice", "Which is placed higher up, <object0> or <object1>?"),
        ("higher_choice point=top", "Whose top is higher, <object0> or <object1>?"),
        ("higher_choice", "Of <object0>, <object1> and <object2>, which is the highest?"),
        ("higher_choice order=min", "Which of <object0>, <object1>, and <object2> is the lowest?"),
        ("higher_choice form=yesno", "Is <object0> positioned higher than <object1>?"),
        ("higher_choice point=top form=yesno", "Is the top of <object0> higher than the top of <object1>?"),
        ("higher_choice", "Between <object0> and <object1>, which one sits higher above the floor?"),
        ("higher_choice point=bottom", "Whose bottom is higher off the ground, <object0> or <object1>?"),
        ("higher_choice order=min", "Which one is closer to the floor, <object0> or <object1>?"),
        ("higher_choice form=yesno", "Does <object0> sit higher than <object1>?"),
        ("higher_choice", "Which is at a greater height, <object0> or <object1>?"),
        ("higher_choice order=min form=yesno", "Is <object0> lower down than <object1>?"),
    ],
    "left_right": [
        ("left_predicate", "Is <object0> to the left of <object1>?"),
        ("right_predicate", "Is <object0> to the right of <object1>?"),
        ("left_right_choice", "Is <object0> to the left or to the right of <object1>?"),
        ("left_right_choice", "Is <object0> left or right of <object1>?"),
        ("left_predicate", "From where you stand, is <object0> on the left side of <object1>?"),
        ("right_predicate", "Does <object0> appear to the right of <object1>?"),
        ("left_right_choice objects=0,1", "On which side of <object1> is <object0>, left or right?"),
        ("leftmost_choice", "Which one is further to the left, <object0> or <object1>?"),
        ("leftmost_choice side=right", "Which one is more to the right, <object0> or <object1>?"),
        ("left_predicate objects=1,0", "Relative to <object0>, is <object1> on the left?"),
        ("right_predicate", "Is <object0> positioned on the right-hand side of <object1>?"),
        ("leftmost_choice", "Of <object0>, <object1> and <object2>, which is the leftmost?"),
        ("leftmost_choice side=right", "Which of <object0>, <object1>, <object2> is furthest right?"),
        ("left_right_choice", "Looking from here, is <object0> left of <object1> or right of it?"),
        ("left_predicate", "Can you confirm that <object0> is to the left of <object1>?"),
        ("right_predicate objects=1,0", "Compared with <object0>, is <object1> further right?"),
    ],
    "side_of_me": [
        ("side_of_me", "Is <object0> on my left or my right?"),
        ("side_of_me", "Is <object0> to your left or to your right?"),
        ("side_of_me side=left", "Is <object0> on my left?"),
        ("side_of_me side=right", "Is <object0> on your right?"),
        ("side_of_me", "On which side of me is <object0>, left or right?"),
        ("side_of_me side=left", "Is <object0> to my left?"),
        ("side_of_me", "Which side is <object0> on, my left or my right?"),
        ("side_of_me side=right", "Is <object0> to the right of you?"),
        ("side_of_me", "Would I find <object0> on my left-hand side or my right-hand side?"),
        ("side_of_me side=left", "Is <object0> on your left-hand side?"),
        ("side_of_me", "Left or right: where is <object0> relative to me?"),
        ("side_of_me side=right", "Is <object0> on my right-hand side?"),
        ("side_of_me", "Is <object0> on the left or the right of me?"),
        ("side_of_me side=left", "Do I have <object0> on my left?"),
        ("side_of_me", "Relative to where I'm facing, is <object0> left or right?"),
        ("side_of_me side=right", "Is <object0> located to your right?"),
    ],
    "direction": [
        ("direction_clock", "At what clock direction is <object0> relative to you?"),
        ("direction_clock", "Where is <object0> in clock terms, from your point of view?"),
        ("direction_degrees", "At how many degrees clockwise from where you face is <object0>?"),
        (
            "rotate_to_face",
            "How many degrees clockwise do you need to turn to face the direction of <object0>?",
        ),
        (
            "rotate_to_face",
            "To face towards <object0>, how many degrees should you rotate in a clockwise direction?",
        ),
        (
            "rotate_to_face",
            "What degree of clockwise rotation is necessary for you to face <object0>'s direction?",
        ),
        ("direction_clock", "Which o'clock is <object0> at?"),
        (
            "direction_degrees",
            "What is the bearing of <object0> in degrees, measured clockwise from straight ahead?",
        ),
        ("rotate_to_face direction=ccw", "How many degrees counterclockwise must I turn to face <object0>?"),
        ("direction_clock", "If straight ahead is 12 o'clock, at what o'clock is <object0>?"),
        ("rotate_to_face", "How far clockwise should I rotate, in degrees, to look straight at <object0>?"),
        ("direction_degrees", "In degrees clockwise from your heading, where is <object0>?"),
        ("direction_clock", "Using the clock face, what direction is <object0> from me?"),
        (
            "rotate_to_face direction=ccw",
            "How many degrees anticlockwise do you have to rotate to face <object0>?",
        ),
        ("direction_degrees", "What angle, clockwise from my forward direction, is <object0> at?"),
        ("direction_clock", "Tell me the clock position of <object0> relative to me."),
    ],
    "future_direction": [
        (
            "future_direction_clock turn=left angle_deg=90",
            "After you turn 90 degrees to the left, where will <object0> be in relation to you?",
        ),
        (
            "future_direction_clock turn=left angle_deg=90",
            "If you turn left by 90 degrees, in which direction will <object0> be positioned?",
        ),
        (
            "future_direction_clock turn=left angle_deg=90",
            "Upon making a 90-degree left turn, how will <object0> be oriented with respect to you?",
        ),
        (
            "future_direction_clock turn=right angle_deg=90",
            "If I turn right 90 degrees, at what o'clock will <object0> be?",
        ),
        (
            "future_direction_clock turn=right angle_deg=180",
            "After turning around 180 degrees to the right, which clock direction is <object0> at?",
        ),
        (
            "future_direction_degrees turn=left angle_deg=45",
            "After a 45 degree turn to the left, how many degrees clockwise from my heading is <object0>?",
        ),
        (
            "future_direction_clock turn=right angle_deg=30",
            "Once you rotate 30 degrees to your right, where is <object0> on the clock?",
        ),
        (
            "future_direction_clock turn=left angle_deg=60",
            "Turn left by 60 degrees: at which o'clock does <object0> end up?",
        ),
        (
            "future_direction_degrees turn=right angle_deg=90",
            "If you turned 90 degrees right, at how many degrees clockwise would <object0> be?",
        ),
        (
            "future_direction_clock turn=left angle_deg=90",
            "Imagine you make a quarter turn to the left. Where would <object0> be, in clock terms?",
        ),
        (
            "future_direction_clock turn=right angle_deg=120",
            "After rotating 120 degrees clockwise, what clock direction will <object0> be in?",
        ),
        (
            "future_direction_clock turn=left angle_deg=45",
            "If I rotate 45 degrees counterclockwise, where will <object0> be relative to me?",
        ),
        (
            "future_direction_degrees turn=left angle_deg=30",
            "After turning 30 degrees left, what is the clockwise angle from my heading to <object0>?",
        ),
        (
            "future_direction_clock turn=right angle_deg=90",
            "When you have turned right by ninety degrees, at what o'clock will <object0> be?",
        ),
        (
            "future_direction_clock turn=left angle_deg=180",
            "If you turn 180 degrees to the left, where is <object0> then?",
        ),
        (
            "future_direction_clock turn=right angle_deg=60",
            "Suppose I turn to my right by 60 degrees; which o'clock direction is <object0> at?",
        ),
    ],
    "reachability": [
        ("reachability", "Can you reach <object0> without moving?"),
        ("reachability arm_length_m=1.5", "Can I reach <object0> if my arm is 1.5 meters long?"),
        ("reachability", "Is <object0> within arm's reach?"),
        (
            "reachability arm_length_m=1.2",
            "With an arm length of 1.2 m, can you pick up <object0> from here?",
        ),
        ("reachability", "Can you grab <object0> from where you are?"),
        ("reachability arm_length_m=0.6", "My arm is 60 cm long. Can I touch <object0> without walking?"),
        ("reachability", "Is <object0> close enough for you to pick up without walking?"),
        ("reachability arm_length_m=2.0", "If your reach is 2 meters, could you get hold of <object0>?"),
        ("reachability", "Could you touch <object0> from your current position?"),
        ("reachability arm_length_m=1.0", "Assuming a 1 m arm, is <object0> reachable?"),
        ("reachability", "Do I need to walk to pick up <object0>, or can I reach it?"),
        ("reachability arm_length_m=0.9", "Is <object0> within reach of a 0.9 meter arm?"),
        ("reachability", "Can you get <object0> without taking a step?"),
        (
            "reachability arm_length_m=1.5",
            "Given that your arm is 150 centimeters long, can you reach <object0>?",
        ),
        ("reachability", "Is <object0> reachable from here?"),
        (
            "reachability arm_length_m=0.75",
            "With a reach of 0.75 meters, can I grab <object0> without moving?",
        ),
    ],
    "walked_distance": [
        ("walked_distance", "How far have you walked in total?"),
        ("walked_distance", "What is the total distance you have covered walking?"),
        ("walked_distance", "What is the overall distance you have walked?"),
        ("walked_distance", "How far have I moved so far?"),
        ("walked_distance", "How much distance did you travel during this clip?"),
        ("walked_distance unit=cm", "How many centimeters have you walked?"),
        ("walked_distance", "What's the length of the path you walked?"),
        ("walked_distance", "How many meters did I walk?"),
        ("walked_distance", "How long was your walk, in meters?"),
        ("walked_distance", "How far did the camera travel?"),
        ("walked_distance unit=ft", "How many feet have you walked in total?"),
        ("walked_distance", "What distance have you covered since the start?"),
        ("walked_distance", "Tell me how far I have gone."),
        ("walked_distance", "How much ground did you cover?"),
        ("walked_distance", "Total distance travelled by you?"),
        ("walked_distance", "How far have you gone on foot during the video?"),
    ],
}


# The blind sets in the order they were written. The twelfth is the held-out set; the thirteenth, written
# after it as a second probe and generalised on, is development data like the rest.
_DEV_SETS = ["paraphrases_blind", *(f"paraphrases_blind{k}" for k in range(2, 12)), "paraphrases_blind13"]
_HELDOUT_SET = "paraphrases_blind12"


def _families(module: str) -> dict[str, list[tuple[str, str]]]:
    families: dict[str, list[tuple[str, str]]] = importlib.import_module(
        f"rynnec_ros.spatial.{module}"
    ).FAMILIES
    return families


def split(half: str) -> list[tuple[str, str, str]]:
    """``(family, expected, question)`` of a set: ``"dev"`` (this file, then the blind sets but the
    twelfth, in the order written) or ``"heldout"`` (the twelfth blind set, ``paraphrases_blind12.py``)."""
    if half == "dev":
        sets = [FAMILIES, *(_families(m) for m in _DEV_SETS)]
    elif half == "heldout":
        sets = [_families(_HELDOUT_SET)]
    else:
        raise ValueError(f"half must be 'dev' or 'heldout', got {half!r}")
    return [
        (family, expected, question)
        for families in sets
        for family, entries in families.items()
        for expected, question in entries
    ]
