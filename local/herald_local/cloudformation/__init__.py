"""CloudFormation, as the local stack needs it: template.yaml read and translated from SAM
(``template``), split into what moto's CloudFormation creates and what the runtime plays itself
(``stack_plan``, ``intrinsics``, ``deferred``), created in moto and read back resolved
(``moto_stack``, ``resources``), with the local stack's parameter values (``parameters``), into the
``topology`` every other service plays."""
