"""The stack's capacity plan, and the checks of the stack as a whole that need the planner or the
region: VPC room, zones, the way down and the component's arguments."""
