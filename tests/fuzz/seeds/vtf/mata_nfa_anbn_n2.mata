@NFA-explicit
%Initial q0
%Final q4
q0 0 q1
q2 1 q3
q1 0 q2
q3 1 q4
q1 1 q4
