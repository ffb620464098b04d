@NFA-explicit
%Alphabet-auto
%Initial q0
%Final q1
q0 a q1
