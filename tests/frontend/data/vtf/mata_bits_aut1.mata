@NFA-bits
%Initial q8
%Final !q0 & !q1 & !q2 & !q3 & !q4 & !q5 & !q6 & !q8 & !q9
q6 \true q4
q8 \true q3
q4 \true q5
q3 \true q1
q1 \true q6
q7 \false \true
q2 \true q9
q9 \true q0
q5 \true q2
q0 \true q7
